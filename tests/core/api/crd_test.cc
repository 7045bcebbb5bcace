// Checks the CRD manifests against the C++ types: printer columns, CEL immutability rules,
// bounds shared with core/api/limits.h, and that the sample manifest parses and validates.
#include <set>
#include <string>

#include <yaml-cpp/yaml.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/api/limits.h"
#include "core/api/model_quota.h"
#include "core/api/model_revision.h"
#include "core/api/model_revision_validation.h"
#include "core/api/revision_digest.h"
#include "tests/core/api/test_support.h"

namespace modelplane::core::api {
namespace {

using ::testing::IsEmpty;
using ::testing::IsSupersetOf;

YAML::Node LoadCrd(const std::string& file) {
  return YAML::Load(testing::ReadSourceFile("crds/" + file));
}

YAML::Node Version(const YAML::Node& crd) {
  return crd["spec"]["versions"][0];
}

YAML::Node Schema(const YAML::Node& crd) {
  return Version(crd)["schema"]["openAPIV3Schema"];
}

std::set<std::string> ColumnNames(const YAML::Node& crd) {
  std::set<std::string> names;
  for (const auto& column : Version(crd)["additionalPrinterColumns"]) {
    names.insert(column["name"].as<std::string>());
  }
  return names;
}

std::set<std::string> Rules(const YAML::Node& schema) {
  std::set<std::string> rules;
  for (const auto& rule : schema["x-kubernetes-validations"]) {
    EXPECT_TRUE(rule["message"].IsDefined()) << rule["rule"].as<std::string>();
    rules.insert(rule["rule"].as<std::string>());
  }
  return rules;
}

TEST(CrdTest, ModelRevisionIdentityAndSubresources) {
  const YAML::Node crd = LoadCrd("modelrevisions.yaml");
  EXPECT_EQ(crd["apiVersion"].as<std::string>(), "apiextensions.k8s.io/v1");
  EXPECT_EQ(crd["metadata"]["name"].as<std::string>(), "modelrevisions.modelplane.io");
  EXPECT_EQ(crd["spec"]["group"].as<std::string>(), kApiGroup);
  EXPECT_EQ(crd["spec"]["scope"].as<std::string>(), "Namespaced");
  EXPECT_EQ(crd["spec"]["names"]["kind"].as<std::string>(), kModelRevisionKind);
  EXPECT_EQ(crd["spec"]["names"]["shortNames"][0].as<std::string>(), "mr");
  EXPECT_EQ(crd["spec"]["names"]["categories"][0].as<std::string>(), "modelplane");
  EXPECT_EQ(Version(crd)["name"].as<std::string>(), "v1alpha1");
  EXPECT_TRUE(Version(crd)["served"].as<bool>());
  EXPECT_TRUE(Version(crd)["storage"].as<bool>());
  EXPECT_TRUE(Version(crd)["subresources"]["status"].IsMap());
  EXPECT_THAT(ColumnNames(crd),
              IsSupersetOf({"Phase", "Ready", "Desired", "Size", "Digest", "Age"}));
}

TEST(CrdTest, ModelRevisionExecutionFieldsAreImmutable) {
  const YAML::Node spec = Schema(LoadCrd("modelrevisions.yaml"))["properties"]["spec"];
  for (const char* field : {"files", "format", "parallelism", "quantization", "engine"}) {
    EXPECT_EQ(Rules(spec["properties"][field]), std::set<std::string>{"self == oldSelf"}) << field;
  }
  const YAML::Node sources = spec["properties"]["sources"];
  EXPECT_THAT(Rules(sources), IsSupersetOf({"self.map(s, s.name) == oldSelf.map(s, s.name)"}));
  EXPECT_THAT(Rules(sources["items"]), IsSupersetOf({"self.type == oldSelf.type"}));
  for (const char* location :
       {"objectStore", "http", "sharedFilesystem", "huggingFace", "modelScope"}) {
    EXPECT_EQ(Rules(sources["items"]["properties"][location]),
              std::set<std::string>{"self == oldSelf"})
        << location;
  }
  // Optional fields: the field-level rule only runs when both sides exist, so the parent checks
  // that presence does not change.
  EXPECT_THAT(Rules(spec), IsSupersetOf({"has(self.parallelism) == has(oldSelf.parallelism)",
                                         "has(self.quantization) == has(oldSelf.quantization)"}));
}

TEST(CrdTest, ModelRevisionBoundsMatchTheParser) {
  const YAML::Node spec = Schema(LoadCrd("modelrevisions.yaml"))["properties"]["spec"];
  const YAML::Node files = spec["properties"]["files"];
  EXPECT_EQ(files["maxItems"].as<std::size_t>(), kMaxFiles);
  EXPECT_EQ(files["x-kubernetes-list-type"].as<std::string>(), "map");
  EXPECT_EQ(files["items"]["properties"]["path"]["maxLength"].as<std::size_t>(), kMaxPathLength);
  EXPECT_EQ(files["items"]["properties"]["size"]["maximum"].as<std::int64_t>(), kMaxFileSize);
  EXPECT_EQ(files["items"]["properties"]["sha256"]["pattern"].as<std::string>(),
            "^sha256:[0-9a-f]{64}$");
  std::set<std::string> roles;
  for (const auto& role : files["items"]["properties"]["role"]["enum"]) {
    roles.insert(role.as<std::string>());
  }
  EXPECT_EQ(roles, (std::set<std::string>{"weights", "index", "config", "tokenizer", "quantization",
                                          "adapter", "engine-cache"}));
  EXPECT_EQ(spec["properties"]["sources"]["maxItems"].as<std::size_t>(), kMaxSources);
  EXPECT_EQ(spec["properties"]["format"]["enum"][0].as<std::string>(), kFormatSafetensors);
}

TEST(CrdTest, ModelCacheShape) {
  const YAML::Node crd = LoadCrd("modelcaches.yaml");
  EXPECT_EQ(crd["spec"]["scope"].as<std::string>(), "Cluster");
  EXPECT_EQ(crd["spec"]["names"]["shortNames"][0].as<std::string>(), "mc");
  EXPECT_TRUE(Version(crd)["subresources"]["status"].IsMap());
  EXPECT_THAT(ColumnNames(crd), IsSupersetOf({"Capacity", "Used", "Age"}));
  const YAML::Node status = Schema(crd)["properties"]["status"]["properties"];
  EXPECT_EQ(status["revisions"]["maxItems"].as<std::size_t>(), kMaxCacheRevisions);
  std::set<std::string> states;
  for (const auto& state : status["revisions"]["items"]["properties"]["state"]["enum"]) {
    states.insert(state.as<std::string>());
  }
  EXPECT_EQ(states, (std::set<std::string>{"Pending", "Staging", "Ready", "Evicting", "Failed"}));
  const YAML::Node spec = Schema(crd)["properties"]["spec"]["properties"];
  const YAML::Node peers = spec["revisions"]["items"]["properties"]["peers"];
  EXPECT_EQ(peers["maxItems"].as<std::size_t>(), kMaxRevisionPeers);
  EXPECT_EQ(peers["items"]["properties"]["files"]["maxItems"].as<std::size_t>(), kMaxPeerFiles);
  EXPECT_EQ(spec["holdings"]["maxItems"].as<std::size_t>(), kMaxCacheRevisions);
}

TEST(CrdTest, SampleManifestParsesValidatesAndHasADigest) {
  auto revision =
      ModelRevisionFromJson(testing::LoadYamlAsJson("crds/examples/modelrevision-sample.yaml"));
  ASSERT_TRUE(revision.has_value()) << revision.error().message();
  EXPECT_THAT(ValidateModelRevisionSpec(revision->spec), IsEmpty());
  EXPECT_TRUE(ComputeRevisionDigest(revision->spec).has_value());
}

TEST(CrdTest, ModelQuotaIsNamespacedAndItsSampleParses) {
  const YAML::Node crd = LoadCrd("modelquotas.yaml");
  EXPECT_EQ(crd["spec"]["scope"].as<std::string>(), "Namespaced");
  EXPECT_TRUE(Version(crd)["subresources"]["status"].IsMap());
  EXPECT_THAT(ColumnNames(crd), IsSupersetOf({"Prestaged", "Pinned", "Limited"}));
  const YAML::Node status = Schema(crd)["properties"]["status"]["properties"];
  EXPECT_EQ(status["limitedRevisions"]["maxItems"].as<std::size_t>(), kMaxLimitedRevisions);
  auto quota = ModelQuotaFromJson(testing::LoadYamlAsJson("crds/examples/modelquota-sample.yaml"));
  ASSERT_TRUE(quota.has_value()) << quota.error().message();
  EXPECT_EQ(quota->spec.prestaged_bytes, std::int64_t{1536} << 30);
  EXPECT_EQ(quota->spec.pinned_bytes, std::int64_t{600} << 30);
  EXPECT_EQ(quota->spec.pin_ttl_after_last_use, std::chrono::hours(24));
}

}  // namespace
}  // namespace modelplane::core::api
