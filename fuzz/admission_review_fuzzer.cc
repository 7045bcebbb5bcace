// libFuzzer target: arbitrary bytes as the body kube-apiserver POSTs to the admission webhook.
//
// Reads the AdmissionReview, runs the injection on whatever object it carries (against a
// revision that exists and one that does not), and checks what the API server relies on: the
// JSONPatch applied to the object gives exactly the injected pod, a second pass over that pod
// changes nothing, and the answer is valid JSON naming the request's uid.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "operator/webhook/admission_review.h"
#include "operator/webhook/pod_injection.h"

namespace {

using modelplane::controller::AdmissionVerdict;
using modelplane::controller::InjectionResult;
using modelplane::controller::RevisionLookup;
using nlohmann::json;

RevisionLookup Found(RevisionLookup::State state) {
  return {.state = state,
          .digest = "sha256:" + std::string(64, 'a'),
          .problem = state == RevisionLookup::State::kInvalid ? "bad" : ""};
}

void Check(const modelplane::controller::AdmissionRequest& request, RevisionLookup::State state) {
  const auto lookup = [state](const std::string&, const std::string&) { return Found(state); };
  const InjectionResult result =
      modelplane::controller::InjectServingPod(request.object, request.namespace_name, lookup, {});
  AdmissionVerdict verdict{
      .allowed = result.allowed, .message = result.message, .warnings = result.warnings};
  if (result.pod) {
    if (!result.allowed) std::abort();
    const json patch = json::diff(request.object, *result.pod);
    if (request.object.patch(patch) != *result.pod) std::abort();
    verdict.patch = patch;
    const InjectionResult again =
        modelplane::controller::InjectServingPod(*result.pod, request.namespace_name, lookup, {});
    if (!again.allowed || again.pod) std::abort();
  }
  const json answer =
      json::parse(modelplane::controller::WriteAdmissionReview(request.uid, verdict));
  if (answer["response"]["uid"] != request.uid) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto request = modelplane::controller::ParseAdmissionReview(body);
  if (!request) return 0;
  Check(*request, RevisionLookup::State::kValid);
  Check(*request, RevisionLookup::State::kMissing);
  Check(*request, RevisionLookup::State::kRevoked);
  return 0;
}
