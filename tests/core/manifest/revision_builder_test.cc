// Revisions built from a file list: the defaults every writer shares, validation before anyone
// applies the result, and YAML that parses back to the same object.
#include "core/manifest/revision_builder.h"

#include <gtest/gtest.h>

#include "core/api/model_revision_validation.h"
#include "core/manifest/manifest_yaml.h"

namespace modelplane::core {
namespace {

constexpr std::string_view kDigest =
    "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

api::ModelSource HubSource() {
  api::ModelSource source;
  source.name = "hub";
  source.type = std::string(api::kSourceHuggingFace);
  source.hugging_face =
      api::HubLocation{.endpoint = "", .repository = "acme/tiny", .commit = std::string(40, 'b')};
  source.credentials_secret_ref = api::SecretReference{.name = "hf-token"};
  return source;
}

std::vector<api::ModelFile> Files() {
  return {{.path = "config.json", .size = 2, .sha256 = std::string(kDigest), .role = "config"},
          {.path = "model.safetensors",
           .size = 4096,
           .sha256 = std::string(kDigest),
           .role = "weights"}};
}

TEST(SpecFromDefaults, SafetensorsWithTheEngineAndParallelism) {
  const api::ModelRevisionSpec spec = SpecFromDefaults(
      {.engine = "sglang", .engine_version = "0.4", .model_name = "tiny", .tensor_parallel = 2});
  EXPECT_EQ(spec.format, "safetensors");
  EXPECT_EQ(spec.engine.name, "sglang");
  EXPECT_EQ(spec.engine.version, "0.4");
  EXPECT_EQ(spec.model_name, "tiny");
  EXPECT_EQ(spec.parallelism.tensor_parallel, 2);
  EXPECT_EQ(SpecFromDefaults({}).engine.name, "vllm");
}

TEST(BuildRevision, HubSourceRoundTripsThroughYaml) {
  api::ModelRevisionSpec spec = SpecFromDefaults({.engine_version = "0.6.3"});
  spec.repository_revision = "main";
  auto revision = BuildRevision("tiny-r1", "", spec, Files(), HubSource());
  ASSERT_TRUE(revision.has_value()) << revision.error().ToString();
  const std::string yaml = RevisionToYaml(*revision);
  EXPECT_EQ(yaml.find("namespace:"), std::string::npos) << yaml;  // kubectl's context decides
  EXPECT_NE(yaml.find("version: \"0.6.3\""), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("repositoryRevision: main"), std::string::npos) << yaml;
  auto parsed = RevisionFromYaml(yaml);
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString() << "\n" << yaml;
  EXPECT_EQ(*parsed, *revision) << yaml;
  EXPECT_TRUE(api::ValidateModelRevisionSpec(parsed->spec).empty()) << yaml;
}

TEST(BuildRevision, RefusesWhatTheApiServerWouldRefuse) {
  std::vector<api::ModelFile> files = Files();
  files[1].size = 4;  // a weights file shorter than the safetensors header length
  auto revision = BuildRevision("r", "ns", SpecFromDefaults({}), files, HubSource());
  ASSERT_FALSE(revision.has_value());
  EXPECT_EQ(revision.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(revision.error().message().find("the manifest would be invalid"), std::string::npos);
}

}  // namespace
}  // namespace modelplane::core
