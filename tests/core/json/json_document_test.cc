#include "core/json/json_document.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

using ::testing::HasSubstr;

TEST(JsonDocumentTest, ParsesOrdinaryDocument) {
  auto document = ParseJsonDocument(R"({"a": [1, {"b": "c"}], "d": null})");
  ASSERT_TRUE(document.has_value()) << document.error().message();
  EXPECT_EQ((*document)["a"][1]["b"], "c");
}

TEST(JsonDocumentTest, RejectsDocumentOverSizeLimitBeforeParsing) {
  const std::string text = "{\"a\": \"" + std::string(100, 'x') + "\"}";
  auto document = ParseJsonDocument(text, {.max_bytes = 50});
  ASSERT_FALSE(document.has_value());
  EXPECT_EQ(document.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(document.error().message(), HasSubstr("exceeds the limit of 50 bytes"));
}

TEST(JsonDocumentTest, RejectsDeepArrayNesting) {
  const std::string text = std::string(100000, '[') + std::string(100000, ']');
  auto document = ParseJsonDocument(text);
  ASSERT_FALSE(document.has_value());
  EXPECT_THAT(document.error().message(), HasSubstr("nesting deeper than 32 levels"));
}

TEST(JsonDocumentTest, RejectsDeepObjectNestingNamingThePath) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "{\"k\":";
  text += "1";
  for (int i = 0; i < 40; ++i) text += "}";
  auto document = ParseJsonDocument(text, {.max_depth = 3});
  ASSERT_FALSE(document.has_value());
  EXPECT_THAT(document.error().message(), HasSubstr("k.k.k: nesting deeper than 3 levels"));
}

TEST(JsonDocumentTest, AcceptsNestingAtTheLimit) {
  EXPECT_TRUE(ParseJsonDocument("[[[1]]]", {.max_depth = 3}).has_value());
  EXPECT_FALSE(ParseJsonDocument("[[[[1]]]]", {.max_depth = 3}).has_value());
}

TEST(JsonDocumentTest, RejectsDuplicateKeysWithPath) {
  auto document =
      ParseJsonDocument(R"({"spec": {"files": [{"path": "a"}, {"path": "b", "path": "c"}]}})");
  ASSERT_FALSE(document.has_value());
  EXPECT_THAT(document.error().message(), HasSubstr("spec.files[1].path: duplicate key"));
}

TEST(JsonDocumentTest, SameKeyInSiblingObjectsIsFine) {
  EXPECT_TRUE(ParseJsonDocument(R"([{"a": 1}, {"a": 2}, {"b": {"a": 3}}])").has_value());
}

TEST(JsonDocumentTest, RejectsInvalidUtf8) {
  auto document = ParseJsonDocument("{\"a\": \"\xff\xfe\"}");
  ASSERT_FALSE(document.has_value());
  EXPECT_THAT(document.error().message(), HasSubstr("invalid JSON"));
  EXPECT_FALSE(ParseJsonDocument("{\"a\": \"\xc0\xaf\"}").has_value());      // overlong '/'
  EXPECT_FALSE(ParseJsonDocument("{\"a\": \"\xed\xa0\x80\"}").has_value());  // surrogate
  EXPECT_FALSE(ParseJsonDocument(R"({"a": "\ud800"})").has_value());         // lone escape
}

TEST(JsonDocumentTest, RejectsMalformedDocuments) {
  for (const char* text : {"", "{", "{\"a\":}", "{\"a\": 1,}", "{\"a\": 1} x", "[1 2]", "nul",
                           "{'a': 1}", "{\"a\": 01}", "{\"a\": NaN}"}) {
    auto document = ParseJsonDocument(text);
    EXPECT_FALSE(document.has_value()) << text;
    if (!document) {
      EXPECT_THAT(document.error().message(), HasSubstr("invalid JSON")) << text;
    }
  }
}

TEST(JsonDocumentTest, RejectsNulBytesThatWouldEndParsingEarly) {
  auto document = ParseJsonDocument(std::string("{\"a\": 1}\0{\"b\": 2}", 17));
  ASSERT_FALSE(document.has_value());
  EXPECT_THAT(document.error().message(), HasSubstr("NUL byte at offset 8"));
  EXPECT_TRUE(ParseJsonDocument(R"({"a": "\u0000"})").has_value());  // escaped NUL is fine
}

TEST(JsonDocumentTest, QuotesHostileKeysInPaths) {
  auto document = ParseJsonDocument("{\"a.b\\n\": {\"x\": 1, \"x\": 2}}");
  ASSERT_FALSE(document.has_value());
  EXPECT_THAT(document.error().message(), HasSubstr(R"(["a.b\x0a"].x: duplicate key)"));
}

}  // namespace
}  // namespace modelplane::core
