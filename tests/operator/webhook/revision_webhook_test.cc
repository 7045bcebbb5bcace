#include "operator/webhook/revision_webhook.h"

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json Revision() {
  std::ifstream in(std::string(MODELPLANE_SOURCE_DIR) +
                   "/tests/core/api/testdata/modelrevision-from-apiserver.json");
  std::stringstream text;
  text << in.rdbuf();
  json revision = json::parse(text.str());
  revision.erase("status");
  return revision;
}

core::SourcePolicy Policy() {
  return {
      .shared_filesystems = {{.root = "/mnt/models"}},
      .object_stores = {{.endpoint = "https://s3.us-east-1.amazonaws.com", .buckets = {"models"}}},
      .http_origins = {{.url = "https://models.example.com/"}},
      .credentials = {{.secret = "rotated", .namespaces = {"models"}}}};
}

TEST(ReviewModelRevision, AllowsWhatThePolicyAllows) {
  const core::SourcePolicy policy = Policy();
  const AdmissionVerdict verdict = ReviewModelRevision(Revision(), "models", &policy);
  EXPECT_TRUE(verdict.allowed) << verdict.message;
}

TEST(ReviewModelRevision, RefusesAPrestageAskItsNamespacesQuotaCouldNeverGrant) {
  const core::SourcePolicy policy = Policy();
  json revision = Revision();
  std::int64_t total = 0;
  for (const json& file : revision["spec"]["files"]) total += file["size"].get<std::int64_t>();
  revision["spec"]["prestage"] = {{"nodes", 4}};
  const core::api::NamespaceQuota three_copies{.prestaged_bytes = 3 * total,
                                               .prestaged_by = "models/limits"};
  const AdmissionVerdict refused = ReviewModelRevision(revision, "models", &policy, &three_copies);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.code, 403);
  EXPECT_THAT(refused.message, HasSubstr("QuotaExceeded: spec.prestage.nodes 4 asks for"));
  EXPECT_THAT(refused.message, HasSubstr("ModelQuota models/limits"));
  EXPECT_THAT(refused.message, HasSubstr("ask for at most 3 nodes"));
  // What fits alone is admitted; what the others hold is the operator's to weigh.
  revision["spec"]["prestage"]["nodes"] = 3;
  EXPECT_TRUE(ReviewModelRevision(revision, "models", &policy, &three_copies).allowed);
  revision["spec"]["prestage"]["nodes"] = 4;
  EXPECT_TRUE(ReviewModelRevision(revision, "models", &policy, nullptr).allowed);
  const core::api::NamespaceQuota pins_only{.pinned_bytes = 0, .pinned_by = "models/pins"};
  EXPECT_TRUE(ReviewModelRevision(revision, "models", &policy, &pins_only).allowed);
}

TEST(ReviewModelRevision, RefusesAPathOutsideTheRootsNamingTheRule) {
  const core::SourcePolicy policy = Policy();
  json revision = Revision();
  revision["spec"]["sources"].push_back(
      {{"name", "nfs"},
       {"type", "sharedFilesystem"},
       {"sharedFilesystem", {{"path", "/var/run/secrets/kubernetes.io/serviceaccount"}}}});
  const AdmissionVerdict verdict = ReviewModelRevision(revision, "models", &policy);
  EXPECT_FALSE(verdict.allowed);
  EXPECT_EQ(verdict.code, 403);
  EXPECT_THAT(verdict.message, HasSubstr("source \"nfs\""));
  EXPECT_THAT(verdict.message, HasSubstr("sharedFilesystems"));
}

TEST(ReviewModelRevision, RefusesAnotherNamespacesSecret) {
  const core::SourcePolicy policy = Policy();
  json revision = Revision();
  revision["metadata"]["namespace"] = "team-b";
  // Its own namespace's "rotated" is team-b's to use.
  EXPECT_TRUE(ReviewModelRevision(revision, "team-b", &policy).allowed);
  // models' "rotated" is not.
  revision["spec"]["sources"][0]["credentialsSecretRef"]["namespace"] = "models";
  const AdmissionVerdict verdict = ReviewModelRevision(revision, "team-b", &policy);
  EXPECT_FALSE(verdict.allowed);
  EXPECT_THAT(verdict.message, HasSubstr("credentialsSecretRef \"models/rotated\""));
  EXPECT_THAT(verdict.message, HasSubstr("namespace \"team-b\""));
}

TEST(ReviewModelRevision, RefusesEverythingWithoutAPolicyAndInvalidSpecsFirst) {
  const AdmissionVerdict none = ReviewModelRevision(Revision(), "models", nullptr);
  EXPECT_FALSE(none.allowed);
  EXPECT_THAT(none.message, HasSubstr("no source policy"));

  const core::SourcePolicy policy = Policy();
  json invalid = Revision();
  invalid["spec"]["files"][0]["sha256"] = "sha256:nothex";
  const AdmissionVerdict refused = ReviewModelRevision(invalid, "models", &policy);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.code, 422);
  EXPECT_THAT(refused.message, HasSubstr("spec.files[0].sha256"));
}

TEST(ReviewModelRevision, TheRequestsNamespaceWhenTheObjectHasNone) {
  const core::SourcePolicy policy = Policy();
  json revision = Revision();
  revision["metadata"].erase("namespace");
  // models' Secret: its own in models, another namespace's in team-b.
  revision["spec"]["sources"][0]["credentialsSecretRef"]["namespace"] = "models";
  EXPECT_FALSE(ReviewModelRevision(revision, "team-b", &policy).allowed);
  EXPECT_TRUE(ReviewModelRevision(revision, "models", &policy).allowed);
}

}  // namespace
}  // namespace modelplane::controller
