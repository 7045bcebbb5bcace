#include "node-agent/possession/possession_failure.h"

#include <gtest/gtest.h>

#include "core/api/model_cache.h"

namespace modelplane::agent {
namespace {

using core::ErrorCode;

TEST(PossessionFailureTest, EachCodeMapsToItsReason) {
  const std::vector<std::pair<ErrorCode, std::string_view>> cases = {
      {ErrorCode::kDataLoss, core::api::kCacheReasonPossessionNotProven},
      {ErrorCode::kPermissionDenied, core::api::kCacheReasonSourceAccessDenied},
      {ErrorCode::kUnauthenticated, core::api::kCacheReasonSourceAccessDenied},
      {ErrorCode::kAddressDenied, core::api::kCacheReasonSourceAddressDenied},
      {ErrorCode::kNotFound, core::api::kCacheReasonSourceNotFound},
      {ErrorCode::kUnavailable, core::api::kCacheReasonSourceUnavailable},
      {ErrorCode::kDeadlineExceeded, core::api::kCacheReasonSourceUnavailable},
      {ErrorCode::kThrottled, core::api::kCacheReasonSourceUnavailable},
      {ErrorCode::kConflict, core::api::kCacheReasonPossessionNotProven},
      {ErrorCode::kInvalidArgument, core::api::kCacheReasonPossessionNotProven},
      {ErrorCode::kIo, core::api::kCacheReasonPossessionNotProven},
  };
  for (const auto& [code, reason] : cases) {
    const PossessionFailure failure = DescribePossessionFailure(core::Error(code, "x"));
    EXPECT_EQ(failure.reason, reason) << core::ErrorCodeName(code);
    EXPECT_FALSE(failure.message.empty());
  }
}

// The error names the host's paths, sources and offsets; status gets a fixed sentence.
TEST(PossessionFailureTest, MessageCarriesNothingFromTheError) {
  const core::Error error(ErrorCode::kDataLoss,
                          "source nfs served bytes that differ from /var/cache/blobs/ab12 at "
                          "offset 77, sha256:0123456789abcdef");
  const PossessionFailure failure = DescribePossessionFailure(error);
  EXPECT_EQ(failure.message.find("/var/cache"), std::string::npos) << failure.message;
  EXPECT_EQ(failure.message.find("sha256"), std::string::npos) << failure.message;
  EXPECT_EQ(failure.message.find("nfs"), std::string::npos) << failure.message;
  EXPECT_NE(failure.message.find("not reused"), std::string::npos) << failure.message;
}

}  // namespace
}  // namespace modelplane::agent
