#include "operator/webhook/admission_review.h"

#include "core/json/json_document.h"
#include "core/text/base64.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;

constexpr char kApiVersion[] = "admission.k8s.io/v1";
// The API server shows at most this many warnings, each at most 256 characters (it truncates).
constexpr std::size_t kMaxWarnings = 16;
constexpr std::size_t kMaxWarningLength = 256;
constexpr std::size_t kMaxMessageLength = 4096;

core::Result<AdmissionRequest> Invalid(const std::string& message) {
  return core::MakeError(core::ErrorCode::kInvalidArgument, "AdmissionReview: " + message);
}

std::string StringAt(const json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

}  // namespace

core::Result<AdmissionRequest> ParseAdmissionReview(std::string_view body) {
  // A pod spec nests deeper than our own objects (affinity terms inside containers of lists).
  auto document =
      core::ParseJsonDocument(body, {.max_bytes = kMaxAdmissionReviewBytes, .max_depth = 64});
  if (!document) return std::unexpected(document.error().Wrap("AdmissionReview"));
  const json& review = *document;
  if (!review.is_object()) return Invalid("not a JSON object");
  if (StringAt(review, "apiVersion") != kApiVersion ||
      StringAt(review, "kind") != "AdmissionReview") {
    return Invalid("expected apiVersion admission.k8s.io/v1 and kind AdmissionReview");
  }
  const auto request = review.find("request");
  if (request == review.end() || !request->is_object()) return Invalid("no request");
  AdmissionRequest parsed;
  parsed.uid = StringAt(*request, "uid");
  if (parsed.uid.empty()) return Invalid("request.uid is missing");
  parsed.operation = StringAt(*request, "operation");
  if (const auto kind = request->find("kind"); kind != request->end() && kind->is_object()) {
    parsed.group = StringAt(*kind, "group");
    parsed.kind = StringAt(*kind, "kind");
  }
  parsed.namespace_name = StringAt(*request, "namespace");
  parsed.name = StringAt(*request, "name");
  if (const auto dry_run = request->find("dryRun");
      dry_run != request->end() && dry_run->is_boolean()) {
    parsed.dry_run = dry_run->get<bool>();
  }
  if (const auto object = request->find("object"); object != request->end()) {
    parsed.object = *object;
  }
  return parsed;
}

std::string WriteAdmissionReview(const std::string& uid, const AdmissionVerdict& verdict) {
  json response = {{"uid", uid}, {"allowed", verdict.allowed}};
  if (!verdict.allowed) {
    response["status"] = {{"code", verdict.code},
                          {"message", verdict.message.substr(0, kMaxMessageLength)}};
  }
  if (verdict.allowed && verdict.patch && !verdict.patch->empty()) {
    response["patchType"] = "JSONPatch";
    response["patch"] = core::EncodeBase64(verdict.patch->dump());
  }
  if (!verdict.warnings.empty()) {
    json warnings = json::array();
    for (std::size_t i = 0; i < verdict.warnings.size() && i < kMaxWarnings; ++i) {
      warnings.push_back(verdict.warnings[i].substr(0, kMaxWarningLength));
    }
    response["warnings"] = std::move(warnings);
  }
  return json({{"apiVersion", kApiVersion}, {"kind", "AdmissionReview"}, {"response", response}})
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace modelplane::controller
