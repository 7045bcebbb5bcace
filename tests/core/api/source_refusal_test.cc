#include "core/api/source_refusal.h"

#include <gtest/gtest.h>

#include "core/api/model_cache.h"

namespace modelplane::core::api {
namespace {

TEST(SourceRefusalTest, SourceErrorsHaveOneReasonEach) {
  const std::vector<std::pair<ErrorCode, std::string_view>> cases = {
      {ErrorCode::kPermissionDenied, kCacheReasonSourceAccessDenied},
      {ErrorCode::kUnauthenticated, kCacheReasonSourceAccessDenied},
      {ErrorCode::kAddressDenied, kCacheReasonSourceAddressDenied},
      {ErrorCode::kNotFound, kCacheReasonSourceNotFound},
      {ErrorCode::kUnavailable, kCacheReasonSourceUnavailable},
      {ErrorCode::kDeadlineExceeded, kCacheReasonSourceUnavailable},
      {ErrorCode::kThrottled, kCacheReasonSourceUnavailable}};
  for (const auto& [code, reason] : cases) {
    const auto refusal = SourceRefusalOf(code);
    ASSERT_TRUE(refusal) << ErrorCodeName(code);
    EXPECT_EQ(refusal->reason, reason) << ErrorCodeName(code);
    EXPECT_FALSE(refusal->clause.empty());
  }
}

TEST(SourceRefusalTest, ErrorsThatAreNotASourcesHaveNone) {
  for (const ErrorCode code : {ErrorCode::kDataLoss, ErrorCode::kResourceExhausted,
                               ErrorCode::kInvalidArgument, ErrorCode::kIo}) {
    EXPECT_FALSE(SourceRefusalOf(code)) << ErrorCodeName(code);
  }
}

}  // namespace
}  // namespace modelplane::core::api
