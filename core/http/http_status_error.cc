#include "core/http/http_status_error.h"

#include <fmt/format.h>

namespace modelplane::core {

ErrorCode ErrorCodeForHttpStatus(unsigned status) {
  switch (status) {
    case 401: return ErrorCode::kUnauthenticated;
    case 403: return ErrorCode::kPermissionDenied;
    case 404: return ErrorCode::kNotFound;
    case 408: return ErrorCode::kDeadlineExceeded;
    case 409:
    case 412: return ErrorCode::kConflict;
    case 410: return ErrorCode::kGone;
    case 413: return ErrorCode::kResourceExhausted;
    case 429:
    case 503: return ErrorCode::kThrottled;  // "come back later" (S3 SlowDown, a full peer)
    case 504: return ErrorCode::kDeadlineExceeded;
    default: break;
  }
  if (status >= 400 && status < 500) return ErrorCode::kInvalidArgument;
  return ErrorCode::kUnavailable;  // 5xx, and 1xx/3xx the client does not follow
}

bool IsRedirectStatus(unsigned status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

bool IsRetryableHttpStatus(unsigned status) {
  return status == 429 || status == 502 || status == 503 || status == 504;
}

Error HttpStatusError(unsigned status, std::string_view url, std::string_view detail) {
  std::string message = fmt::format("HTTP {} from {}", status, url);
  if (!detail.empty()) message += fmt::format(": {}", detail);
  return Error(ErrorCodeForHttpStatus(status), std::move(message), IsRetryableHttpStatus(status))
      .WithHttpStatus(status);
}

}  // namespace modelplane::core
