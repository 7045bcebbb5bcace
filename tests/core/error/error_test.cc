#include "core/error/error.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

Result<int> ParsePositive(int value) {
  if (value <= 0) return MakeError(ErrorCode::kInvalidArgument, "value must be positive");
  return value;
}

TEST(ErrorTest, RetryableFollowsCodeUnlessOverridden) {
  EXPECT_TRUE(Error(ErrorCode::kUnavailable, "x").retryable());
  EXPECT_TRUE(Error(ErrorCode::kThrottled, "x").retryable());
  EXPECT_FALSE(Error(ErrorCode::kInvalidArgument, "x").retryable());
  EXPECT_FALSE(Error(ErrorCode::kDataLoss, "x").retryable());
  EXPECT_FALSE(Error(ErrorCode::kUnavailable, "x", /*retryable=*/false).retryable());
}

TEST(ErrorTest, WrapKeepsCodeAndRetryability) {
  Error inner(ErrorCode::kDeadlineExceeded, "read timed out");
  Error outer = inner.Wrap("fetching shard 3");
  EXPECT_EQ(outer.code(), ErrorCode::kDeadlineExceeded);
  EXPECT_TRUE(outer.retryable());
  EXPECT_EQ(outer.message(), "fetching shard 3: read timed out");
  EXPECT_EQ(outer.ToString(), "deadline_exceeded: fetching shard 3: read timed out");
}

TEST(ErrorTest, TheHttpStatusIsAFieldKeptThroughWrap) {
  const Error plain(ErrorCode::kUnavailable, "HTTP 503 from a message is only text");
  EXPECT_FALSE(plain.http_status().has_value());
  const Error answered = Error(ErrorCode::kNotFound, "missing").WithHttpStatus(404);
  EXPECT_EQ(answered.http_status(), 404u);
  EXPECT_EQ(answered.Wrap("reading x").http_status(), 404u);
  EXPECT_EQ(answered.MarkTerminal().http_status(), 404u);
  EXPECT_FALSE(answered.WithHttpStatus(std::nullopt).http_status().has_value());
}

TEST(ErrorTest, ResultCarriesValueOrError) {
  auto good = ParsePositive(3);
  ASSERT_TRUE(good.has_value());
  EXPECT_EQ(*good, 3);
  auto bad = ParsePositive(-1);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
}

TEST(ErrorTest, EveryCodeHasAName) {
  for (int code = 0; code <= static_cast<int>(ErrorCode::kInternal); ++code) {
    EXPECT_NE(ErrorCodeName(static_cast<ErrorCode>(code)), "unknown");
  }
}

}  // namespace
}  // namespace modelplane::core

namespace modelplane::core {
namespace {

TEST(ErrorTest, TerminalErrorsAreMarkedAndNeverRetryable) {
  const Error plain(ErrorCode::kPermissionDenied, "denied");
  EXPECT_FALSE(plain.terminal());
  const Error terminal = Error(ErrorCode::kUnavailable, "spec names nothing").MarkTerminal();
  EXPECT_TRUE(terminal.terminal());
  EXPECT_FALSE(terminal.retryable());
  EXPECT_TRUE(terminal.Wrap("reconciling").terminal()) << "wrapping keeps it terminal";
}

}  // namespace
}  // namespace modelplane::core
