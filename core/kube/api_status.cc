#include "core/kube/api_status.h"

#include <nlohmann/json.hpp>

#include "core/json/json_lookup.h"
#include "core/kube/api_json_limits.h"

namespace modelplane::core {
namespace {

constexpr std::size_t kMaxQuotedBody = 512;

ErrorCode CodeFor(int status, const std::string& reason) {
  switch (status) {
    case 400: return ErrorCode::kInvalidArgument;
    case 401: return ErrorCode::kUnauthenticated;
    case 403: return ErrorCode::kPermissionDenied;
    case 404: return ErrorCode::kNotFound;
    case 408: return ErrorCode::kDeadlineExceeded;
    case 409: return reason == "AlreadyExists" ? ErrorCode::kAlreadyExists : ErrorCode::kConflict;
    case 410: return ErrorCode::kGone;
    case 413: return ErrorCode::kResourceExhausted;
    case 415:
    case 422: return ErrorCode::kInvalidArgument;
    case 429: return ErrorCode::kThrottled;
    case 504: return ErrorCode::kDeadlineExceeded;
    default: break;
  }
  if (status >= 500) return ErrorCode::kUnavailable;
  return ErrorCode::kInternal;
}

}  // namespace

Error ErrorFromApiResponse(int http_status, const std::string& body, const std::string& what) {
  std::string reason;
  std::string message;
  // A body that is not a Status (a proxy's HTML page, text) is quoted below instead.
  if (auto status = ParseJsonDocument(body, kApiResponseJsonLimits);
      status && StringMember(*status, {"kind"}) == "Status") {
    reason = StringMember(*status, {"reason"});
    message = StringMember(*status, {"message"});
  }
  if (message.empty()) {
    message = body.size() > kMaxQuotedBody ? body.substr(0, kMaxQuotedBody) + "..." : body;
  }
  std::string text = what + ": HTTP " + std::to_string(http_status);
  if (!reason.empty()) text += " " + reason;
  if (!message.empty()) text += ": " + message;
  Error error(CodeFor(http_status, reason), std::move(text));
  if (http_status > 0) return error.WithHttpStatus(static_cast<unsigned>(http_status));
  return error;
}

}  // namespace modelplane::core
