#include "core/config/yaml_document.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

TEST(YamlDocumentTest, LoadsAMap) {
  auto document = LoadYamlString("a: 1\nb: [x, y]\n", "inline.yaml");
  ASSERT_TRUE(document.has_value()) << document.error().ToString();
  EXPECT_EQ(document->source_name, "inline.yaml");
  EXPECT_EQ(document->root["a"].as<int>(), 1);
  EXPECT_EQ(document->root["b"].size(), 2u);
}

TEST(YamlDocumentTest, EmptyInputIsANullDocument) {
  auto document = LoadYamlString("", "empty.yaml");
  ASSERT_TRUE(document.has_value());
  EXPECT_TRUE(document->root.IsNull());
  ASSERT_TRUE(LoadYamlString("# only a comment\n").has_value());
}

TEST(YamlDocumentTest, MalformedYamlNamesLineAndColumn) {
  const auto document = LoadYamlString("a: 1\nb: [1, 2\nc: 3\n", "bad.yaml");
  ASSERT_FALSE(document);
  EXPECT_EQ(document.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(document.error().message().starts_with("bad.yaml:")) << document.error().message();
  EXPECT_NE(document.error().message().find("malformed YAML"), std::string::npos);

  const auto tab = LoadYamlString("a:\n  b: 1\n c: 2\n", "indent.yaml");
  ASSERT_FALSE(tab);
  EXPECT_TRUE(tab.error().message().starts_with("indent.yaml:3:")) << tab.error().message();
}

TEST(YamlDocumentTest, RejectsMoreThanOneDocument) {
  const auto document = LoadYamlString("a: 1\n---\nb: 2\n", "two.yaml");
  ASSERT_FALSE(document);
  EXPECT_EQ(document.error().message(),
            "two.yaml: holds more than one YAML document; a configuration file holds exactly one");
}

TEST(YamlDocumentTest, RejectsOversizedInputBeforeParsing) {
  const std::string big = "a: \"" + std::string(2 << 20, 'x') + "\"\n";
  const auto document = LoadYamlString(big, "big.yaml");
  ASSERT_FALSE(document);
  EXPECT_NE(document.error().message().find("more than the limit of 1048576 bytes"),
            std::string::npos);
  EXPECT_TRUE(LoadYamlString("a: 12345", "x", {.max_bytes = 8}).has_value());
  EXPECT_FALSE(LoadYamlString("a: 123456", "x", {.max_bytes = 8}).has_value());
}

// Deep nesting would overflow the stack in yaml-cpp's recursive parser if it got that far.
TEST(YamlDocumentTest, RejectsDeepFlowNestingWithoutRecursingIntoIt) {
  const std::string deep = std::string(500'000, '[') + std::string(500'000, ']');
  const auto document = LoadYamlString(deep, "deep.yaml");
  ASSERT_FALSE(document);
  EXPECT_EQ(document.error().message(), "deep.yaml:1:65: nesting deeper than 64 levels");
  const std::string braces = "a: " + std::string(100, '{') + std::string(100, '}');
  EXPECT_FALSE(LoadYamlString(braces));
}

TEST(YamlDocumentTest, RejectsDeepBlockNesting) {
  std::string deep;
  for (int level = 0; level < 100; ++level) {
    deep += std::string(static_cast<std::size_t>(level), ' ') + "k:\n";
  }
  const auto document = LoadYamlString(deep, "block.yaml");
  ASSERT_FALSE(document);
  EXPECT_NE(document.error().message().find("nesting deeper than 64 levels"), std::string::npos);
  const std::string dashes = [] {
    std::string text;
    for (int i = 0; i < 100; ++i) text += "- ";
    return text + "x\n";
  }();
  EXPECT_FALSE(LoadYamlString(dashes));
}

TEST(YamlDocumentTest, NestingAtTheLimitIsAccepted) {
  const std::string at_limit = std::string(64, '[') + std::string(64, ']');
  EXPECT_TRUE(LoadYamlString(at_limit).has_value());
  const std::string over = std::string(65, '[') + std::string(65, ']');
  EXPECT_FALSE(LoadYamlString(over).has_value());
  EXPECT_TRUE(LoadYamlString(over, "x", {.max_depth = 65}).has_value());
}

TEST(YamlDocumentTest, LoadsFiles) {
  const std::filesystem::path path = std::filesystem::path(MODELPLANE_BINARY_DIR) /
                                     ("yaml_document_test_" + std::to_string(::getpid()) + ".yaml");
  {
    std::ofstream file(path);
    file << "a: 1\n";
  }
  auto document = LoadYamlFile(path.string());
  ASSERT_TRUE(document.has_value()) << document.error().ToString();
  EXPECT_EQ(document->source_name, path.string());
  {
    std::ofstream file(path);
    file << std::string(100, '#');
  }
  const auto too_big = LoadYamlFile(path.string(), {.max_bytes = 99});
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().code(), ErrorCode::kInvalidArgument);
  std::filesystem::remove(path);

  const auto missing = LoadYamlFile(path.string());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(LoadYamlFile("/").error().code(), ErrorCode::kInvalidArgument);  // a directory
}

}  // namespace
}  // namespace modelplane::core
