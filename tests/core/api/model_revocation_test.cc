#include "core/api/model_revocation.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/api/model_cache.h"
#include "core/api/revision_digest.h"
#include "tests/core/api/test_support.h"

namespace modelplane::core::api {
namespace {

using ::testing::HasSubstr;

// A test constant: an allocation that throws before main ends the test binary either way.
const std::string kWeights = "sha256:" + std::string(64, 'a');  // NOLINT(cert-err58-cpp)

nlohmann::json RevocationJson(const std::string& digest) {
  return {{"apiVersion", "modelplane.io/v1alpha1"},
          {"kind", "ModelRevocation"},
          {"metadata", {{"name", "poisoned"}}},
          {"spec", {{"digest", digest}, {"reason", "CVE-2026-1"}, {"force", true}}},
          {"status", {{"revisions", 2}, {"nodesHolding", 1}, {"phase", "Purging"}}}};
}

ModelRevision Sample() {
  auto revision =
      ModelRevisionFromJson(testing::LoadYamlAsJson("crds/examples/modelrevision-sample.yaml"));
  EXPECT_TRUE(revision) << revision.error().message();
  return *revision;
}

TEST(ModelRevocationTest, RoundTripsThroughJson) {
  auto revocation = ModelRevocationFromJson(RevocationJson(kWeights));
  ASSERT_TRUE(revocation) << revocation.error().message();
  EXPECT_EQ(revocation->spec.digest, kWeights);
  EXPECT_EQ(revocation->spec.reason, "CVE-2026-1");
  EXPECT_TRUE(revocation->spec.force);
  ASSERT_TRUE(revocation->status);
  EXPECT_EQ(revocation->status->nodes_holding, 1);
  auto again = ModelRevocationFromJson(ToJson(*revocation));
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(*again, *revocation);
}

TEST(ModelRevocationTest, RefusesADigestThatIsNotSha256) {
  for (const std::string& digest : std::vector<std::string>{
           "", "sha256:abc", "md5:" + std::string(32, 'a'), std::string(64, 'a') + "x"}) {
    auto revocation = ModelRevocationFromJson(RevocationJson(digest));
    ASSERT_FALSE(revocation) << digest;
    EXPECT_THAT(revocation.error().message(), HasSubstr("digest")) << digest;
  }
}

TEST(ModelRevocationTest, CoversTheRevisionDigestAndEveryFileDigest) {
  const ModelRevision revision = Sample();
  auto digest = ComputeRevisionDigest(revision.spec);
  ASSERT_TRUE(digest) << digest.error().message();
  auto revision_digest = ParseDigest(*digest);
  ASSERT_TRUE(revision_digest);
  EXPECT_TRUE(Covers({.digest = *digest}, *revision_digest, revision.spec));
  for (const ModelFile& file : revision.spec.files) {
    EXPECT_TRUE(Covers({.digest = file.sha256}, *revision_digest, revision.spec)) << file.path;
  }
  EXPECT_FALSE(Covers({.digest = kWeights}, *revision_digest, revision.spec));
  EXPECT_FALSE(Covers({.digest = "not a digest"}, *revision_digest, revision.spec));
}

TEST(ModelRevocationTest, SpecOrStatusRevokesAndForceComesFromEither) {
  ModelRevision revision = Sample();
  EXPECT_FALSE(IsRevoked(revision));
  EXPECT_FALSE(ForcesPurge(revision));

  // The purge annotation forces only a revision its own spec revokes.
  revision.metadata.annotations[std::string(kPurgeAnnotation)] = std::string(kPurgeForce);
  EXPECT_FALSE(ForcesPurge(revision));
  revision.spec.revoked = true;
  EXPECT_TRUE(IsRevoked(revision));
  EXPECT_TRUE(ForcesPurge(revision));

  ModelRevision covered = Sample();
  covered.status = ModelRevisionStatus{};
  EXPECT_FALSE(IsRevoked(covered));
  covered.status->revoked_by = RevokedBy{.name = "poisoned", .reason = "", .force = false};
  EXPECT_TRUE(IsRevoked(covered));
  EXPECT_FALSE(ForcesPurge(covered));
  covered.status->revoked_by->force = true;
  EXPECT_TRUE(ForcesPurge(covered));
}

TEST(ModelRevocationTest, RevisionStatusKeepsRevokedBy) {
  ModelRevision revision = Sample();
  revision.status = ModelRevisionStatus{.phase = std::string(kPhaseRevoked)};
  revision.status->revoked_by = RevokedBy{.name = "poisoned", .reason = "leak", .force = true};
  auto again = ModelRevisionFromJson(ToJson(revision));
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(again->status, revision.status);
}

}  // namespace
}  // namespace modelplane::core::api
