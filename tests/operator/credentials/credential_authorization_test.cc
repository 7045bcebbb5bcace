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

constexpr std::string_view kAudience = "modelplane-operator";

core::TokenReviewResult AgentToken(std::vector<std::string> nodes = {"node-a"}) {
  core::TokenReviewResult review;
  review.authenticated = true;
  review.username = "system:serviceaccount:modelplane-system:modelplane-node-agent";
  review.audiences = {std::string(kAudience)};
  review.extra[std::string(core::kTokenNodeNameExtra)] = std::move(nodes);
  review.extra[std::string(core::kTokenPodNameExtra)] = {"agent-x1"};
  review.extra[std::string(core::kTokenPodUidExtra)] = {"uid-1"};
  return review;
}

TEST(AgentIdentityOf, OnlyTheAgentAccountsTokenBoundToAPodOnANode) {
  auto identity = AgentIdentityOf(AgentToken(), kAgent, kAudience);
  ASSERT_TRUE(identity) << identity.error().ToString();
  EXPECT_EQ(identity->node, "node-a");
  EXPECT_EQ(identity->pod_name, "agent-x1");
  EXPECT_EQ(identity->pod_uid, "uid-1");

  core::TokenReviewResult invalid;
  invalid.error = "token audiences [\"api\"] is invalid for the target audiences";
  auto refused = AgentIdentityOf(invalid, kAgent, kAudience);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kUnauthenticated);

  // An authenticated review that does not confirm the audience asked for is not trusted.
  core::TokenReviewResult unconfirmed = AgentToken();
  unconfirmed.audiences = {"https://kubernetes.default.svc"};
  auto no_audience = AgentIdentityOf(unconfirmed, kAgent, kAudience);
  ASSERT_FALSE(no_audience);
  EXPECT_EQ(no_audience.error().code(), ErrorCode::kUnauthenticated);
  EXPECT_THAT(no_audience.error().message(), HasSubstr("audience modelplane-operator"));

  core::TokenReviewResult other = AgentToken();
  other.username = "system:serviceaccount:team-a:default";
  auto not_agent = AgentIdentityOf(other, kAgent, kAudience);
  ASSERT_FALSE(not_agent);
  EXPECT_EQ(not_agent.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(not_agent.error().message(), HasSubstr("not the node agent's ServiceAccount"));

  // A token made with `kubectl create token` and no pod names no node: it could speak for any.
  core::TokenReviewResult unbound = AgentToken({});
  unbound.extra.erase(std::string(core::kTokenPodNameExtra));
  auto refused_unbound = AgentIdentityOf(unbound, kAgent, kAudience);
  ASSERT_FALSE(refused_unbound);
  EXPECT_EQ(refused_unbound.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(refused_unbound.error().message(), HasSubstr("not bound to a pod"));
  core::TokenReviewResult no_extra = AgentToken();
  no_extra.extra.clear();
  EXPECT_FALSE(AgentIdentityOf(no_extra, kAgent, kAudience));
  EXPECT_FALSE(AgentIdentityOf(AgentToken({"node-a", "node-b"}), kAgent, kAudience));
  core::TokenReviewResult no_uid = AgentToken();
  no_uid.extra.erase(std::string(core::kTokenPodUidExtra));
  EXPECT_FALSE(AgentIdentityOf(no_uid, kAgent, kAudience));
}

TEST(AgentPodIsLive, TheTokensPodMustExistNowOnItsNodeAndNotBeingDeleted) {
  const AgentIdentity identity{.node = "node-a", .pod_name = "agent-x1", .pod_uid = "uid-1"};
  const nlohmann::json live = {{"metadata", {{"name", "agent-x1"}, {"uid", "uid-1"}}},
                               {"spec", {{"nodeName", "node-a"}}}};
  EXPECT_TRUE(AgentPodIsLive(identity, live));
  const auto refused_because = [&](const nlohmann::json& pod, std::string_view why) {
    auto status = AgentPodIsLive(identity, pod);
    ASSERT_FALSE(status) << why;
    EXPECT_EQ(status.error().code(), ErrorCode::kUnauthenticated);
    EXPECT_THAT(status.error().message(), HasSubstr(why));
  };
  refused_because(nullptr, "no longer exists");
  nlohmann::json replaced = live;
  replaced["metadata"]["uid"] = "uid-2";
  refused_because(replaced, "replaced by another pod");
  nlohmann::json deleting = live;
  deleting["metadata"]["deletionTimestamp"] = "2026-12-07T00:00:00Z";
  refused_because(deleting, "being deleted");
  nlohmann::json moved = live;
  moved["spec"]["nodeName"] = "node-b";
  refused_because(moved, "not on the token's node");
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
