#include "core/api/revision_digest.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/core/api/test_support.h"

namespace modelplane::core::api {
namespace {

using ::testing::HasSubstr;

// Changing any of these fields in crds/examples/modelrevision-sample.yaml, or the encoding in
// docs/api.md, changes this value. Update it only together with the encoding version.
constexpr std::string_view kSampleDigest =
    "sha256:1dbee88ca406ace29af1f497a5f026d97fb7a62cb1cd71db366b6054b0741fbb";

nlohmann::json DigestSampleJson() {
  return testing::LoadYamlAsJson("crds/examples/modelrevision-sample.yaml");
}

std::string DigestOfJson(const nlohmann::json& document) {
  auto spec = ModelRevisionSpecFromJson(document["spec"]);
  EXPECT_TRUE(spec.has_value()) << spec.error().message();
  auto digest = ComputeRevisionDigest(*spec);
  EXPECT_TRUE(digest.has_value()) << digest.error().message();
  return digest.value_or("");
}

std::string DigestAfter(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json document = DigestSampleJson();
  edit(document);
  return DigestOfJson(document);
}

TEST(RevisionDigestTest, GoldenValueForTheSample) {
  EXPECT_EQ(DigestOfJson(DigestSampleJson()), kSampleDigest);
}

TEST(RevisionDigestTest, AnAdaptersBaseIsPartOfItsDigestAndItsNameIsNot) {
  ModelRevisionSpec spec = SampleSpec();
  spec.files[0].role = std::string(kRoleAdapter);
  const std::string plain = ComputeRevisionDigest(spec).value();
  spec.base = BaseRevision{.digest = "sha256:" + std::string(64, 'a'), .name = "llama-r1"};
  const std::string adapter = ComputeRevisionDigest(spec).value();
  EXPECT_NE(adapter, plain);
  spec.base->name = "renamed";
  EXPECT_EQ(ComputeRevisionDigest(spec).value(), adapter);
  spec.base->digest = "sha256:" + std::string(64, 'b');
  EXPECT_NE(ComputeRevisionDigest(spec).value(), adapter);
  // Without an adapter file, or with a malformed digest, it is no valid adapter.
  spec.files[0].role = std::string(kRoleWeights);
  EXPECT_FALSE(ComputeRevisionDigest(spec).has_value());
  spec.files[0].role = std::string(kRoleAdapter);
  spec.base->digest = "llama-r1";
  EXPECT_FALSE(ComputeRevisionDigest(spec).has_value());
}

TEST(RevisionDigestTest, EncodingStartsWithItsVersion) {
  auto spec = ModelRevisionSpecFromJson(DigestSampleJson()["spec"]);
  ASSERT_TRUE(spec.has_value());
  EXPECT_TRUE(CanonicalRevisionEncoding(*spec).starts_with("32:modelplane.io/revision-digest/v1,"));
}

TEST(RevisionDigestTest, IgnoresKeyOrderFileOrderAndFormatting) {
  const std::string base = DigestOfJson(DigestSampleJson());
  // Reversed file order and the default (sorted) key order of a re-serialized document.
  EXPECT_EQ(DigestAfter([](auto& d) {
              auto& files = d["spec"]["files"];
              std::reverse(files.begin(), files.end());
            }),
            base);
  // Different formatting and key order: ordered_json keeps insertion order, so write the keys
  // of every file backwards and compact the text.
  nlohmann::ordered_json reordered;
  const nlohmann::json sample = DigestSampleJson();
  for (auto it = sample["spec"].rbegin(); it != sample["spec"].rend(); ++it) {
    reordered[it.key()] = *it;
  }
  reordered["files"] = nlohmann::ordered_json::array();
  for (const auto& file : sample["spec"]["files"]) {
    reordered["files"].push_back({{"role", file["role"]},
                                  {"sha256", file["sha256"]},
                                  {"size", file["size"]},
                                  {"path", file["path"]}});
  }
  auto reparsed = nlohmann::json::parse(reordered.dump(7));
  EXPECT_EQ(DigestOfJson({{"spec", reparsed}}), base);
}

TEST(RevisionDigestTest, DefaultsHashLikeExplicitValues) {
  const std::string explicit_defaults = DigestAfter([](auto& d) {
    d["spec"]["parallelism"] = {{"tensorParallel", 1}, {"pipelineParallel", 1}};
    d["spec"]["quantization"] = {{"method", "none"}};
  });
  EXPECT_EQ(DigestAfter([](auto& d) {
              d["spec"].erase("parallelism");
              d["spec"].erase("quantization");
            }),
            explicit_defaults);
}

TEST(RevisionDigestTest, EveryExecutionRelevantFieldChangesTheDigest) {
  const std::string base = DigestOfJson(DigestSampleJson());
  const std::vector<std::pair<std::string, std::function<void(nlohmann::json&)>>> edits = {
      {"file path", [](auto& d) { d["spec"]["files"][2]["path"] = "model-2.safetensors"; }},
      {"file size", [](auto& d) { d["spec"]["files"][1]["size"] = 4976698673; }},
      {"file sha256",
       [](auto& d) { d["spec"]["files"][1]["sha256"] = "sha256:" + std::string(64, '0'); }},
      {"file role", [](auto& d) { d["spec"]["files"][4]["role"] = "config"; }},
      {"added file",
       [](auto& d) {
         d["spec"]["files"].push_back({{"path", "generation_config.json"},
                                       {"size", 100},
                                       {"sha256", "sha256:" + std::string(64, '1')},
                                       {"role", "config"}});
       }},
      {"removed file", [](auto& d) { d["spec"]["files"].erase(0); }},
      {"tensorParallel", [](auto& d) { d["spec"]["parallelism"]["tensorParallel"] = 4; }},
      {"pipelineParallel", [](auto& d) { d["spec"]["parallelism"]["pipelineParallel"] = 2; }},
      {"quantization method", [](auto& d) { d["spec"]["quantization"]["method"] = "fp8"; }},
      {"quantization parameter",
       [](auto& d) {
         d["spec"]["quantization"]["parameters"] = {{"bits", "8"}};
       }},
      {"engine name", [](auto& d) { d["spec"]["engine"]["name"] = "sglang"; }},
      {"engine version", [](auto& d) { d["spec"]["engine"]["version"] = "0.6.4"; }},
      {"engine runtime cache key",
       [](auto& d) { d["spec"]["engine"]["runtimeCacheKey"] = "cuda12.4-sm90"; }},
  };
  std::set<std::string> seen = {base};
  for (const auto& [name, edit] : edits) {
    const std::string digest = DigestAfter(edit);
    EXPECT_NE(digest, base) << name;
    EXPECT_TRUE(seen.insert(digest).second) << name << " collides with another edit";
  }
}

TEST(RevisionDigestTest, FieldsThatDoNotChangeExecutionLeaveTheDigestAlone) {
  const std::string base = DigestOfJson(DigestSampleJson());
  const std::vector<std::pair<std::string, std::function<void(nlohmann::json&)>>> edits = {
      {"model name", [](auto& d) { d["spec"]["modelName"] = "Something else"; }},
      {"repository revision", [](auto& d) { d["spec"]["repositoryRevision"] = "main"; }},
      {"sources", [](auto& d) { d["spec"]["sources"].erase(0); }},
      {"source bucket",
       [](auto& d) { d["spec"]["sources"][0]["objectStore"]["bucket"] = "mirror"; }},
      {"prestage",
       [](auto& d) {
         d["spec"]["prestage"] = {{"nodes", 40}};
       }},
      {"retention", [](auto& d) { d["spec"]["retention"]["rollbackWindow"] = "1h"; }},
      {"revoked", [](auto& d) { d["spec"]["revoked"] = true; }},
      {"metadata", [](auto& d) { d["metadata"]["name"] = "other"; }},
  };
  for (const auto& [name, edit] : edits) EXPECT_EQ(DigestAfter(edit), base) << name;
}

TEST(RevisionDigestTest, StringsCannotBleedIntoNeighbouringFields) {
  // With a naive concatenation these two would encode alike.
  nlohmann::json a = DigestSampleJson();
  a["spec"]["engine"]["name"] = "vllm";
  a["spec"]["engine"]["version"] = "10.6.3";
  nlohmann::json b = DigestSampleJson();
  b["spec"]["engine"]["name"] = "vllm1";
  b["spec"]["engine"]["version"] = "0.6.3";
  EXPECT_NE(DigestOfJson(a), DigestOfJson(b));
}

TEST(RevisionDigestTest, RefusesInvalidSpecs) {
  auto spec = ModelRevisionSpecFromJson(DigestSampleJson()["spec"]);
  ASSERT_TRUE(spec.has_value());
  spec->files.push_back(spec->files[0]);
  auto digest = ComputeRevisionDigest(*spec);
  ASSERT_FALSE(digest.has_value());
  EXPECT_THAT(digest.error().message(), HasSubstr("spec.files[5].path: duplicate path"));
}

}  // namespace
}  // namespace modelplane::core::api
