#include "core/error/error.h"

namespace modelplane::core {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kNotFound: return "not_found";
    case ErrorCode::kAlreadyExists: return "already_exists";
    case ErrorCode::kConflict: return "conflict";
    case ErrorCode::kGone: return "gone";
    case ErrorCode::kPermissionDenied: return "permission_denied";
    case ErrorCode::kAddressDenied: return "address_denied";
    case ErrorCode::kUnauthenticated: return "unauthenticated";
    case ErrorCode::kResourceExhausted: return "resource_exhausted";
    case ErrorCode::kThrottled: return "throttled";
    case ErrorCode::kUnavailable: return "unavailable";
    case ErrorCode::kDeadlineExceeded: return "deadline_exceeded";
    case ErrorCode::kDataLoss: return "data_loss";
    case ErrorCode::kCancelled: return "cancelled";
    case ErrorCode::kIo: return "io";
    case ErrorCode::kInternal: return "internal";
  }
  return "unknown";
}

bool IsRetryableByDefault(ErrorCode code) {
  switch (code) {
    case ErrorCode::kThrottled:
    case ErrorCode::kUnavailable:
    case ErrorCode::kDeadlineExceeded:
    case ErrorCode::kConflict: return true;
    default: return false;
  }
}

Error Error::Wrap(std::string_view context) const {
  Error wrapped(code_, std::string(context) + ": " + message_, retryable_);
  wrapped.terminal_ = terminal_;
  wrapped.http_status_ = http_status_;
  wrapped.retry_after_ = retry_after_;
  wrapped.server_reason_ = server_reason_;
  return wrapped;
}

std::string Error::ToString() const {
  return std::string(ErrorCodeName(code_)) + ": " + message_;
}

}  // namespace modelplane::core
