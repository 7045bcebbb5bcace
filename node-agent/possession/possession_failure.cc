#include "node-agent/possession/possession_failure.h"

#include <string_view>

#include <fmt/format.h>

#include "core/api/model_cache.h"

namespace modelplane::agent {
namespace {

using core::ErrorCode;

PossessionFailure Failure(std::string_view reason, std::string_view why) {
  return {.reason = std::string(reason),
          .message = fmt::format("{}, so bytes this node holds for another revision are not "
                                 "reused for it; details are in the node agent's log (event "
                                 "possession_not_proven)",
                                 why)};
}

}  // namespace

PossessionFailure DescribePossessionFailure(const core::Error& error) {
  switch (error.code()) {
    case ErrorCode::kPermissionDenied:
    case ErrorCode::kUnauthenticated:
      return Failure(core::api::kCacheReasonSourceAccessDenied,
                     "the revision's own sources refused access to its files (credentials, "
                     "permissions, or a path that leads out of its allowed root)");
    case ErrorCode::kAddressDenied:
      return Failure(core::api::kCacheReasonSourceAddressDenied,
                     "the revision's sources resolved only to addresses the source policy does "
                     "not allow");
    case ErrorCode::kNotFound:
      return Failure(core::api::kCacheReasonSourceNotFound,
                     "a file of the revision was not found at any of its own sources");
    case ErrorCode::kUnavailable:
    case ErrorCode::kDeadlineExceeded:
    case ErrorCode::kThrottled:
      return Failure(core::api::kCacheReasonSourceUnavailable,
                     "the revision's own sources could not be reached or did not serve its files "
                     "in time");
    default:
      return Failure(core::api::kCacheReasonPossessionNotProven,
                     "the revision's own sources did not serve the bytes its files name");
  }
}

}  // namespace modelplane::agent
