#include "core/api/source_refusal.h"

#include "core/api/model_cache.h"

namespace modelplane::core::api {

std::optional<SourceRefusal> SourceRefusalOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kPermissionDenied:
    case ErrorCode::kUnauthenticated:
      return SourceRefusal{kCacheReasonSourceAccessDenied,
                           "refused access to its files (credentials, permissions, a path that "
                           "leads out of its allowed root, or a redirect to a host the source "
                           "policy does not list)"};
    case ErrorCode::kAddressDenied:
      return SourceRefusal{kCacheReasonSourceAddressDenied,
                           "resolved only to addresses the source policy does not allow "
                           "(loopback, private, link-local and other special-purpose ranges "
                           "need the rule's addresses)"};
    case ErrorCode::kNotFound:
      return SourceRefusal{kCacheReasonSourceNotFound, "did not have a file it names"};
    case ErrorCode::kUnavailable:
    case ErrorCode::kDeadlineExceeded:
    case ErrorCode::kThrottled:
      return SourceRefusal{kCacheReasonSourceUnavailable,
                           "could not be reached or did not serve its files in time"};
    default: return std::nullopt;
  }
}

}  // namespace modelplane::core::api
