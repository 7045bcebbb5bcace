#include "core/policy/source_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config/config_loader.h"

namespace modelplane::core {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kPolicy = R"(
credentialsNamespace: modelplane
sharedFilesystems:
  - root: /mnt/models
    namespaces: [team-a]
  - root: /mnt/public
objectStores:
  - endpoint: http://MinIO.example:9000
    buckets: [models]
    nodeCredentials: true
  - buckets: ["*"]
    namespaces: [team-b]
httpOrigins:
  - url: https://huggingface.co/org/
credentials:
  - secret: models-readonly
    namespaces: [team-a]
)";

SourcePolicy Policy() {
  auto policy = LoadConfigString<SourcePolicy>(kPolicy);
  EXPECT_TRUE(policy) << policy.error().ToString();
  return *policy;
}

api::ModelSource Shared(std::string path) {
  return {.name = "nfs",
          .type = std::string(api::kSourceSharedFilesystem),
          .shared_filesystem = api::SharedFilesystemLocation{.path = std::move(path)}};
}

api::ModelSource Store(std::string endpoint, std::string bucket,
                       std::optional<std::string> secret = std::nullopt) {
  api::ModelSource source{.name = "s3",
                          .type = std::string(api::kSourceObjectStore),
                          .object_store = api::ObjectStoreLocation{}};
  source.object_store->endpoint = std::move(endpoint);
  source.object_store->bucket = std::move(bucket);
  if (secret) source.credentials_secret_ref = api::SecretReference{.name = *secret};
  return source;
}

api::ModelSource Http(std::string url) {
  return {.name = "hf",
          .type = std::string(api::kSourceHttp),
          .http = api::HttpLocation{.base_url = std::move(url)}};
}

std::string Refusal(const SourcePolicy& policy, std::string_view namespace_name,
                    const api::ModelSource& source) {
  auto grants = AuthorizeSources(&policy, namespace_name, {source});
  if (grants) return "";
  EXPECT_EQ(grants.error().code(), ErrorCode::kPermissionDenied);
  return grants.error().message();
}

TEST(SourcePolicyTest, SharedFilesystemPathsMustLieBelowAnAllowedRoot) {
  const SourcePolicy policy = Policy();
  auto grants = AuthorizeSources(&policy, "team-a", {Shared("/mnt/models/llama")});
  ASSERT_TRUE(grants) << grants.error().ToString();
  EXPECT_EQ((*grants)[0].confine_root, "/mnt/models");
  EXPECT_EQ(Refusal(policy, "team-a", Shared("/mnt/models")), "");
  EXPECT_EQ(Refusal(policy, "anyone", Shared("/mnt/public/x")), "");

  EXPECT_THAT(Refusal(policy, "team-a", Shared("/var/run/secrets/kubernetes.io")),
              HasSubstr("below no sharedFilesystems root"));
  EXPECT_THAT(Refusal(policy, "team-b", Shared("/mnt/models/llama")),
              HasSubstr("namespace \"team-b\""));
  EXPECT_THAT(Refusal(policy, "team-a", Shared("/mnt/modelsevil")), HasSubstr("below no"));
  EXPECT_THAT(Refusal(policy, "team-a", Shared("/mnt/models/../../etc")), HasSubstr("'..'"));
  EXPECT_THAT(Refusal(policy, "team-a", Shared("mnt/models")), HasSubstr("absolute"));
  EXPECT_THAT(Refusal(policy, "team-a", Shared("/mnt/models/")), HasSubstr("end with '/'"));
}

TEST(SourcePolicyTest, ObjectStoresNeedAMatchingEndpointBucketAndCredentials) {
  const SourcePolicy policy = Policy();
  auto grants =
      AuthorizeSources(&policy, "team-a", {Store("http://minio.example:9000/", "models")});
  ASSERT_TRUE(grants) << grants.error().ToString();
  EXPECT_TRUE((*grants)[0].node_credentials);

  EXPECT_THAT(Refusal(policy, "team-a", Store("http://minio.example:9000", "other")),
              HasSubstr("matches no objectStores rule"));
  EXPECT_THAT(Refusal(policy, "team-a", Store("http://169.254.169.254", "models")),
              HasSubstr("matches no objectStores rule"));
  EXPECT_THAT(Refusal(policy, "team-a", Store("http://minio.example:9000/x", "models")),
              HasSubstr("must not carry a path"));
  // The AWS rule is team-b's, and it does not lend the agent's own credentials.
  EXPECT_THAT(Refusal(policy, "team-a", Store("", "any")), HasSubstr("no objectStores rule"));
  EXPECT_THAT(Refusal(policy, "team-b", Store("", "any")), HasSubstr("nodeCredentials"));
}

TEST(SourcePolicyTest, CredentialSecretsBelongToTheirNamespaceUnlessGranted) {
  const SourcePolicy policy = Policy();
  // team-b may read AWS, but a Secret of the agent's namespace is not its own.
  EXPECT_THAT(Refusal(policy, "team-b", Store("", "any", "team-b-keys")),
              HasSubstr("by no credentials rule"));
  EXPECT_THAT(Refusal(policy, "team-b", Store("", "b", "models-readonly")),
              HasSubstr("granted to namespace \"team-b\""));
  EXPECT_EQ(Refusal(policy, "modelplane", Store("http://minio.example:9000", "models", "x")), "");

  SourcePolicy granted = policy;
  granted.object_stores.push_back({.buckets = {"*"}});
  EXPECT_EQ(Refusal(granted, "team-a", Store("", "b", "models-readonly")), "");
  EXPECT_THAT(Refusal(granted, "team-a", Store("", "b", "other-team")),
              HasSubstr("by no credentials rule"));
  EXPECT_THAT(Refusal(granted, "team-a", Store("", "b", "../peer-token")),
              HasSubstr("not a Secret name"));
}

TEST(SourcePolicyTest, HttpOriginsMatchSchemeHostPortAndPathPrefix) {
  const SourcePolicy policy = Policy();
  EXPECT_EQ(Refusal(policy, "x", Http("https://HuggingFace.co/org/model/resolve/main")), "");
  EXPECT_EQ(Refusal(policy, "x", Http("https://huggingface.co:443/org")), "");
  EXPECT_THAT(Refusal(policy, "x", Http("https://huggingface.co/organisation")),
              HasSubstr("no httpOrigins rule"));
  EXPECT_THAT(Refusal(policy, "x", Http("http://huggingface.co/org/m")),
              HasSubstr("no httpOrigins rule"));
  EXPECT_THAT(Refusal(policy, "x", Http("https://huggingface.co:8443/org/m")),
              HasSubstr("no httpOrigins rule"));
  EXPECT_THAT(Refusal(policy, "x", Http("http://127.0.0.1:10250/pods")),
              HasSubstr("no httpOrigins rule"));
  EXPECT_THAT(Refusal(policy, "x", Http("https://huggingface.co/org/../admin")), HasSubstr("'..'"));
  EXPECT_THAT(Refusal(policy, "x", Http("https://huggingface.co/org/%2E%2E/admin")),
              HasSubstr("encoded"));
  EXPECT_THAT(Refusal(policy, "x", Http("https://user@huggingface.co/org/m")),
              HasSubstr("http.baseUrl"));
}

TEST(SourcePolicyTest, EveryBrokenSourceIsNamedAndNoPolicyRefusesAll) {
  const SourcePolicy policy = Policy();
  auto grants = AuthorizeSources(
      &policy, "team-a",
      {Shared("/etc"), Store("http://minio.example:9000", "models"), Http("http://10.0.0.1/")});
  ASSERT_FALSE(grants);
  EXPECT_THAT(grants.error().message(), HasSubstr("source \"nfs\""));
  EXPECT_THAT(grants.error().message(), HasSubstr("source \"hf\""));
  EXPECT_THAT(grants.error().message(), ::testing::Not(HasSubstr("source \"s3\"")));

  auto none = AuthorizeSources(nullptr, "team-a", {Shared("/mnt/models/x")});
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message(), HasSubstr("no source policy"));
  EXPECT_TRUE(AuthorizeSources(nullptr, "team-a", {}));
}

TEST(SourcePolicyTest, BadRulesAreRejectedWithTheirLine) {
  auto root = LoadConfigString<SourcePolicy>("sharedFilesystems:\n  - root: /\n");
  ASSERT_FALSE(root);
  EXPECT_THAT(root.error().message(), HasSubstr("whole node"));
  auto relative = LoadConfigString<SourcePolicy>("sharedFilesystems:\n  - root: data/../x\n");
  ASSERT_FALSE(relative);
  auto no_buckets = LoadConfigString<SourcePolicy>("objectStores:\n  - endpoint: http://a\n");
  ASSERT_FALSE(no_buckets);
  EXPECT_THAT(no_buckets.error().message(), HasSubstr("buckets"));
  auto typo = LoadConfigString<SourcePolicy>("httpOrigin:\n  - url: https://a\n");
  ASSERT_FALSE(typo);
  auto secret = LoadConfigString<SourcePolicy>("credentials:\n  - secret: ../x\n");
  ASSERT_FALSE(secret);
  EXPECT_THAT(secret.error().message(), HasSubstr("not a Secret name"));
}

}  // namespace
}  // namespace modelplane::core
