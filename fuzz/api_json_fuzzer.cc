// libFuzzer target: arbitrary bytes as a ModelRevision or ModelCache JSON document.
//
// Parses, and for accepted ModelRevisions validates, computes the digest and checks that
// writing and re-reading gives the same object: the round trip the operator relies on.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "core/api/model_revision_validation.h"
#include "core/api/revision_digest.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace api = modelplane::core::api;
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  if (auto revision = api::ParseModelRevision(text)) {
    const auto problems = api::ValidateModelRevisionSpec(revision->spec);
    auto digest = api::ComputeRevisionDigest(revision->spec);
    if (problems.empty() != digest.has_value()) std::abort();
    auto reparsed = api::ModelRevisionFromJson(api::ToJson(*revision));
    if (!reparsed || !(*reparsed == *revision)) std::abort();
    if (digest) {
      auto again = api::ComputeRevisionDigest(reparsed->spec);
      if (!again || *again != *digest) std::abort();
    }
  }
  if (auto cache = api::ParseModelCache(text)) {
    auto reparsed = api::ModelCacheFromJson(api::ToJson(*cache));
    if (!reparsed || !(*reparsed == *cache)) std::abort();
  }
  return 0;
}
