#include "core/kube/api_status.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/kube/watch_stream.h"

namespace modelplane::core {
namespace {

TEST(ApiStatusTest, MapsStatusCodesToActionableErrors) {
  const std::string conflict =
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"the object has been modified","reason":"Conflict","code":409})";
  Error error = ErrorFromApiResponse(409, conflict, "PUT /x");
  EXPECT_EQ(error.code(), ErrorCode::kConflict);
  EXPECT_EQ(error.http_status(), 409u);
  EXPECT_TRUE(error.retryable());
  EXPECT_NE(error.message().find("the object has been modified"), std::string::npos);
  EXPECT_EQ(
      ErrorFromApiResponse(409, R"({"kind":"Status","reason":"AlreadyExists"})", "POST").code(),
      ErrorCode::kAlreadyExists);
  EXPECT_EQ(ErrorFromApiResponse(404, "", "GET").code(), ErrorCode::kNotFound);
  EXPECT_EQ(ErrorFromApiResponse(410, "", "GET").code(), ErrorCode::kGone);
  EXPECT_EQ(ErrorFromApiResponse(422, "", "POST").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorFromApiResponse(429, "", "GET").code(), ErrorCode::kThrottled);
  EXPECT_TRUE(ErrorFromApiResponse(503, "", "GET").retryable());
  EXPECT_FALSE(ErrorFromApiResponse(403, "", "GET").retryable());
  Error long_body = ErrorFromApiResponse(500, std::string(100000, 'x'), "GET");
  EXPECT_LT(long_body.message().size(), 1000u) << "bodies are quoted, bounded";
}

TEST(WatchEventTest, ParsesEventsAndRejectsGarbage) {
  auto added = ParseWatchEvent(R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})");
  ASSERT_TRUE(added.has_value());
  EXPECT_EQ(added->type, WatchEvent::Type::kAdded);
  EXPECT_EQ(added->object["metadata"]["name"], "a");
  auto bookmark =
      ParseWatchEvent(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}})");
  ASSERT_TRUE(bookmark.has_value());
  EXPECT_EQ(bookmark->type, WatchEvent::Type::kBookmark);
  EXPECT_FALSE(ParseWatchEvent("not json").has_value());
  EXPECT_FALSE(ParseWatchEvent(R"({"type":"EXPLODED","object":{}})").has_value());
  EXPECT_FALSE(ParseWatchEvent(R"({"type":"ADDED"})").has_value());
  EXPECT_FALSE(ParseWatchEvent(R"([1,2])").has_value());
}

// Watch events go through the shared bounded parser: two readers could disagree about which of
// two "type" keys counts, and a deeply nested object would cost the parser's stack.
TEST(WatchEventTest, RefusesDuplicateKeysAndDeepNesting) {
  auto duplicate = ParseWatchEvent(R"({"type":"ADDED","type":"DELETED","object":{}})");
  ASSERT_FALSE(duplicate.has_value());
  EXPECT_THAT(duplicate.error().message(), ::testing::HasSubstr("duplicate"));
  std::string deep = R"({"type":"ADDED","object":{"a":)";
  for (int i = 0; i < 100; ++i) deep += "[";
  for (int i = 0; i < 100; ++i) deep += "]";
  deep += "}}";
  auto too_deep = ParseWatchEvent(deep);
  ASSERT_FALSE(too_deep.has_value());
  EXPECT_THAT(too_deep.error().message(), ::testing::HasSubstr("deep"));
  // An API error body with duplicate keys is quoted, not half-read.
  Error error =
      ErrorFromApiResponse(403, R"({"kind":"Status","message":"first","message":"second"})", "GET");
  EXPECT_THAT(error.message(), ::testing::HasSubstr("first"));
  EXPECT_THAT(error.message(), ::testing::HasSubstr("second"));
}

}  // namespace
}  // namespace modelplane::core
