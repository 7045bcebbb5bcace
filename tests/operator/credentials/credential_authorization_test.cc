#include "operator/credentials/credential_authorization.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config/config_loader.h"

namespace modelplane::controller {
namespace {

using core::ErrorCode;
using ::testing::HasSubstr;

// NOLINTNEXTLINE(cert-err58-cpp): a test constant; an allocation failure here ends the test.
const AgentAccount kAgent{.namespace_name = "modelplane-system", .name = "modelplane-node-agent"};

core::TokenReviewResult AgentToken(std::vector<std::string> nodes = {"node-a"}) {
  core::TokenReviewResult review;
  review.authenticated = true;
  review.username = "system:serviceaccount:modelplane-system:modelplane-node-agent";
  review.extra[std::string(core::kTokenNodeNameExtra)] = std::move(nodes);
  return review;
}

TEST(AgentNodeOf, OnlyTheAgentAccountsTokenBoundToANode) {
  auto node = AgentNodeOf(AgentToken(), kAgent);
  ASSERT_TRUE(node) << node.error().ToString();
  EXPECT_EQ(*node, "node-a");

  core::TokenReviewResult invalid;
  invalid.error = "token audiences [\"api\"] is invalid for the target audiences";
  auto refused = AgentNodeOf(invalid, kAgent);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kUnauthenticated);

  core::TokenReviewResult other = AgentToken();
  other.username = "system:serviceaccount:team-a:default";
  auto not_agent = AgentNodeOf(other, kAgent);
  ASSERT_FALSE(not_agent);
  EXPECT_EQ(not_agent.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(not_agent.error().message(), HasSubstr("not the node agent's ServiceAccount"));

  // A token made with `kubectl create token` and no pod names no node: it could speak for any.
  auto unbound = AgentNodeOf(AgentToken({}), kAgent);
  ASSERT_FALSE(unbound);
  EXPECT_EQ(unbound.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(unbound.error().message(), HasSubstr("not bound to a pod"));
  core::TokenReviewResult no_extra = AgentToken();
  no_extra.extra.clear();
  EXPECT_FALSE(AgentNodeOf(no_extra, kAgent));
  EXPECT_FALSE(AgentNodeOf(AgentToken({"node-a", "node-b"}), kAgent));
}

core::SourcePolicy Policy() {
  auto policy = core::LoadConfigString<core::SourcePolicy>(R"(
credentialsNamespace: shared-keys
objectStores:
  - endpoint: http://minio.example:9000
    buckets: ["*"]
credentials:
  - secret: lent-keys
    namespaces: [team-a]
)");
  EXPECT_TRUE(policy) << policy.error().ToString();
  return *policy;
}

core::api::ModelRevision Revision(std::string namespace_name, std::string name, std::string secret,
                                  std::string secret_namespace = "") {
  core::api::ModelRevision revision;
  revision.metadata.namespace_name = std::move(namespace_name);
  revision.metadata.name = std::move(name);
  core::api::ModelSource source{.name = "s3",
                                .type = std::string(core::api::kSourceObjectStore),
                                .object_store = core::api::ObjectStoreLocation{}};
  source.object_store->endpoint = "http://minio.example:9000";
  source.object_store->bucket = "models";
  source.credentials_secret_ref = core::api::SecretReference{
      .name = std::move(secret), .namespace_name = std::move(secret_namespace)};
  revision.spec.sources.push_back(std::move(source));
  return revision;
}

core::api::ModelCacheSpec Holding(std::vector<core::api::RevisionReference> revisions) {
  core::api::ModelCacheSpec spec;
  for (auto& reference : revisions) spec.revisions.push_back({.revision = std::move(reference)});
  return spec;
}

TEST(AuthorizeCredentialRequest, ANodeGetsTheSecretsOfTheRevisionsItsCacheNames) {
  const core::SourcePolicy policy = Policy();
  const std::vector<core::api::ModelRevision> revisions = {
      Revision("team-a", "llama", "team-a-keys"), Revision("team-b", "mistral", "team-b-keys")};
  const auto node = Holding({{"team-a", "llama"}});
  auto allowed = AuthorizeCredentialRequest(&policy, node, revisions, "team-a", "team-a-keys");
  ASSERT_TRUE(allowed) << allowed.error().ToString();
  EXPECT_EQ(allowed->name, "llama");

  // team-b's revision exists, but this node is not asked to hold it.
  auto not_assigned = AuthorizeCredentialRequest(&policy, node, revisions, "team-b", "team-b-keys");
  ASSERT_FALSE(not_assigned);
  EXPECT_EQ(not_assigned.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(not_assigned.error().message(), HasSubstr("team-b/team-b-keys"));
  // The same Secret name in another namespace is another Secret.
  EXPECT_FALSE(AuthorizeCredentialRequest(&policy, node, revisions, "team-b", "team-a-keys"));
  // A Secret no revision names, in the revision's namespace.
  EXPECT_FALSE(AuthorizeCredentialRequest(&policy, node, revisions, "team-a", "admin-keys"));
  // No policy, nothing.
  EXPECT_FALSE(AuthorizeCredentialRequest(nullptr, node, revisions, "team-a", "team-a-keys"));
  // An entry for a revision that is gone grants nothing.
  EXPECT_FALSE(AuthorizeCredentialRequest(&policy, Holding({{"team-a", "deleted"}}), revisions,
                                          "team-a", "team-a-keys"));
}

TEST(AuthorizeCredentialRequest, AnotherNamespacesSecretOnlyWithARule) {
  const core::SourcePolicy policy = Policy();
  // team-a's revision names a Secret in shared-keys that the rule lends team-a; team-b's
  // revision names it too, without a rule: its node gets nothing.
  const std::vector<core::api::ModelRevision> revisions = {
      Revision("team-a", "llama", "lent-keys", "shared-keys"),
      Revision("team-b", "mistral", "lent-keys", "shared-keys"),
      Revision("team-b", "gemma", "other-keys", "team-a")};
  auto lent = AuthorizeCredentialRequest(&policy, Holding({{"team-a", "llama"}}), revisions,
                                         "shared-keys", "lent-keys");
  ASSERT_TRUE(lent) << lent.error().ToString();
  auto not_lent = AuthorizeCredentialRequest(&policy, Holding({{"team-b", "mistral"}}), revisions,
                                             "shared-keys", "lent-keys");
  ASSERT_FALSE(not_lent);
  EXPECT_EQ(not_lent.error().code(), ErrorCode::kPermissionDenied);
  // A revision naming another tenant's Secret gets its node nothing either.
  EXPECT_FALSE(AuthorizeCredentialRequest(&policy, Holding({{"team-b", "gemma"}}), revisions,
                                          "team-a", "other-keys"));
}

}  // namespace
}  // namespace modelplane::controller
