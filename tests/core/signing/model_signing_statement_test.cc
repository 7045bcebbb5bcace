#include "core/signing/model_signing_statement.h"

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/digest/sha256.h"
#include "core/text/hex.h"
#include "tests/core/signing/signing_fixtures.h"

namespace modelplane::core {
namespace {

using ::testing::HasSubstr;

struct Resource {
  std::string name;
  std::string content;  // hashed for the digest
};

std::string HexOf(std::string_view content) {
  return ToHex(Sha256Of(content));
}

// A statement as model_signing writes it, for `resources`, with a correct root digest.
nlohmann::json Statement(const std::vector<Resource>& resources) {
  nlohmann::json listed = nlohmann::json::array();
  std::string digests;
  for (const Resource& resource : resources) {
    const Sha256Bytes digest = Sha256Of(resource.content);
    digests.append(reinterpret_cast<const char*>(digest.data()), digest.size());
    listed.push_back({{"algorithm", "sha256"}, {"name", resource.name}, {"digest", ToHex(digest)}});
  }
  return {
      {"_type", "https://in-toto.io/Statement/v1"},
      {"subject", {{{"name", "tiny"}, {"digest", {{"sha256", HexOf(digests)}}}}}},
      {"predicateType", "https://model_signing/signature/v1.0"},
      {"predicate",
       {{"serialization",
         {{"method", "files"},
          {"hash_type", "sha256"},
          {"allow_symlinks", false},
          {"ignore_paths", {".git", ".gitattributes"}}}},
        {"resources", listed}}},
  };
}

std::vector<Resource> TwoFiles() {
  return {{"config.json", "{}"}, {"weights/a.safetensors", "A"}};
}

std::string StatementRefusal(const nlohmann::json& statement) {
  auto manifest = ParseModelSigningStatement(statement.dump());
  if (manifest) return "";
  EXPECT_EQ(manifest.error().code(), ErrorCode::kInvalidArgument);
  return manifest.error().message();
}

TEST(ModelSigningStatementTest, ReadsTheStatementModelSigningSigned) {
  const std::string payload =
      signing_test::PayloadOf(signing_test::ReadFixture("bundle-key-p256.json"));
  auto manifest = ParseModelSigningStatement(payload);
  ASSERT_TRUE(manifest) << manifest.error().ToString();
  EXPECT_EQ(manifest->model_name, "model");
  const std::vector<api::ModelFile> files = signing_test::SignedFiles();
  ASSERT_EQ(manifest->files.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(manifest->files[i].path, files[i].path);
    EXPECT_EQ(manifest->files[i].sha256, files[i].sha256);
  }
}

TEST(ModelSigningStatementTest, KeepsTheStatementsOrderAndNormalizesDigests) {
  nlohmann::json statement = Statement(TwoFiles());
  // Upper-case hex reads as the same digest (the root is over raw bytes).
  std::string digest = statement["predicate"]["resources"][1]["digest"];
  for (char& c : digest) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  statement["predicate"]["resources"][1]["digest"] = digest;
  auto manifest = ParseModelSigningStatement(statement.dump());
  ASSERT_TRUE(manifest) << manifest.error().ToString();
  ASSERT_EQ(manifest->files.size(), 2U);
  EXPECT_EQ(manifest->files[0].path, "config.json");
  EXPECT_EQ(manifest->files[0].sha256, "sha256:" + HexOf("{}"));
  EXPECT_EQ(manifest->files[1].path, "weights/a.safetensors");
  EXPECT_EQ(manifest->files[1].sha256, "sha256:" + HexOf("A"));
}

TEST(ModelSigningStatementTest, RefusesARootDigestThatDisagreesWithTheResources) {
  nlohmann::json statement = Statement(TwoFiles());
  statement["subject"][0]["digest"]["sha256"] = HexOf("something else");
  EXPECT_THAT(StatementRefusal(statement),
              HasSubstr("subject[0].digest.sha256: " + HexOf("something else") +
                        " is not the digest of the resources' digests"));
  // Reordering the resources changes the root too: the order is signed.
  statement = Statement(TwoFiles());
  std::swap(statement["predicate"]["resources"][0], statement["predicate"]["resources"][1]);
  EXPECT_THAT(StatementRefusal(statement),
              HasSubstr("is not the digest of the resources' digests"));
}

TEST(ModelSigningStatementTest, RefusesSerializationsSpecFilesCannotCheck) {
  nlohmann::json statement = Statement(TwoFiles());
  statement["predicate"]["serialization"]["method"] = "shards";
  statement["predicate"]["serialization"]["shard_size"] = 1000000;
  EXPECT_THAT(StatementRefusal(statement),
              HasSubstr("predicate.serialization.method: \"shards\" (sharded serialization) is "
                        "not supported"));
  statement["predicate"]["serialization"]["method"] = "digest";
  EXPECT_THAT(StatementRefusal(statement),
              HasSubstr("\"digest\" is not supported (only \"files\")"));

  statement = Statement(TwoFiles());
  statement["predicate"]["serialization"]["hash_type"] = "blake2";
  EXPECT_THAT(StatementRefusal(statement),
              HasSubstr("predicate.serialization.hash_type: \"blake2\" is not supported"));

  statement = Statement(TwoFiles());
  statement["predicate"]["resources"][0]["algorithm"] = "blake2";
  EXPECT_THAT(StatementRefusal(statement),
              HasSubstr("predicate.resources[0].algorithm: \"blake2\" is not sha256"));
}

TEST(ModelSigningStatementTest, RefusesAFileNamedTwice) {
  const std::vector<Resource> twice = {{"config.json", "{}"}, {"config.json", "{ }"}};
  EXPECT_THAT(StatementRefusal(Statement(twice)),
              HasSubstr("predicate.resources[1].name: \"config.json\" is named twice"));
}

TEST(ModelSigningStatementTest, RefusesOtherStatementsAndPredicates) {
  nlohmann::json statement = Statement(TwoFiles());
  statement["predicateType"] = "https://model_signing/Digests/v0.1";
  EXPECT_THAT(StatementRefusal(statement), HasSubstr("model-signing's pre-1.0 format"));
  statement["predicateType"] = "https://slsa.dev/provenance/v1";
  EXPECT_THAT(StatementRefusal(statement), HasSubstr("\"https://slsa.dev/provenance/v1\" is not "
                                                     "https://model_signing/signature/v1.0"));

  statement = Statement(TwoFiles());
  statement["_type"] = "https://in-toto.io/Statement/v0.1";
  EXPECT_THAT(StatementRefusal(statement),
              HasSubstr("_type: \"https://in-toto.io/Statement/v0.1\""));

  statement = Statement(TwoFiles());
  statement["subject"].push_back(statement["subject"][0]);
  EXPECT_THAT(StatementRefusal(statement), HasSubstr("subject: must hold exactly one subject"));
  statement["subject"] = nlohmann::json::array();
  EXPECT_THAT(StatementRefusal(statement), HasSubstr("subject: must hold exactly one subject"));

  statement = Statement(TwoFiles());
  statement["predicate"]["resources"][0]["digest"] = "sha256:" + HexOf("{}");
  EXPECT_THAT(StatementRefusal(statement),
              HasSubstr("predicate.resources[0].digest: must be 64 hex digits"));
  statement["predicate"]["resources"][0]["digest"] = "abc";
  EXPECT_THAT(StatementRefusal(statement), HasSubstr("must be 64 hex digits"));

  statement = Statement(TwoFiles());
  statement["predicate"].erase("resources");
  EXPECT_THAT(StatementRefusal(statement), HasSubstr("predicate.resources: is required"));
  statement["predicate"]["resources"] = "config.json";
  EXPECT_THAT(StatementRefusal(statement), HasSubstr("predicate.resources: must be an array"));
}

TEST(ModelSigningStatementTest, RefusesWhatIsNotJson) {
  auto manifest = ParseModelSigningStatement("\x01\x02 not json");
  ASSERT_FALSE(manifest);
  EXPECT_THAT(manifest.error().message(), HasSubstr("the signed statement"));
  EXPECT_FALSE(ParseModelSigningStatement(""));
  EXPECT_FALSE(ParseModelSigningStatement("[]"));
}

}  // namespace
}  // namespace modelplane::core
