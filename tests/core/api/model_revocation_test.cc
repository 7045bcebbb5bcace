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

nlohmann::json SignerRevocationJson(const std::string& name, const std::string& field,
                                    const std::string& value) {
  return {{"apiVersion", "modelplane.io/v1alpha1"},
          {"kind", "ModelRevocation"},
          {"metadata", {{"name", name}}},
          {"spec", {{field, value}, {"reason", "key leaked"}}}};
}

ModelRevocation ParsedRevocation(const nlohmann::json& json) {
  auto revocation = ModelRevocationFromJson(json);
  EXPECT_TRUE(revocation) << revocation.error().message();
  return revocation.value_or(ModelRevocation{});
}

const std::string kReleaseKey = "sha256:" + std::string(64, 'b');  // NOLINT(cert-err58-cpp)
const std::string kOrgKey = "sha256:" + std::string(64, 'c');      // NOLINT(cert-err58-cpp)

TEST(ModelRevocationTest, NamesExactlyOneOfDigestKeyAndIdentity) {
  auto by_key = ModelRevocationFromJson(SignerRevocationJson("k", "signingKey", kReleaseKey));
  ASSERT_TRUE(by_key) << by_key.error().message();
  EXPECT_EQ(by_key->spec.signing_key, kReleaseKey);
  auto again = ModelRevocationFromJson(ToJson(*by_key));
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(*again, *by_key);
  EXPECT_FALSE(ToJson(*by_key)["spec"].contains("digest"));

  auto by_identity =
      ModelRevocationFromJson(SignerRevocationJson("i", "signerIdentity", "release@corp.example"));
  ASSERT_TRUE(by_identity) << by_identity.error().message();
  EXPECT_EQ(by_identity->spec.signer_identity, "release@corp.example");

  auto bad_key = ModelRevocationFromJson(SignerRevocationJson("k", "signingKey", "sha256:abc"));
  ASSERT_FALSE(bad_key);
  EXPECT_THAT(bad_key.error().message(), HasSubstr("signingKey"));

  nlohmann::json two = SignerRevocationJson("two", "signingKey", kReleaseKey);
  two["spec"]["digest"] = kWeights;
  auto both = ModelRevocationFromJson(two);
  ASSERT_FALSE(both);
  EXPECT_THAT(both.error().message(), HasSubstr("exactly one"));
}

TEST(ModelRevocationTest, SignerRevocationsCoverOnlyWhatEveryRemainingSignerWithdrew) {
  const ModelRevision revision = Sample();
  auto digest = ComputeRevisionDigest(revision.spec);
  ASSERT_TRUE(digest) << digest.error().message();
  const Sha256Bytes revision_digest = *ParseDigest(*digest);
  const SignedBy release{.signer = "release", .public_key = kReleaseKey, .identity = ""};
  const SignedBy org{.signer = "corp", .public_key = kOrgKey, .identity = "release@corp.example"};
  const std::vector<ModelRevocation> key_only = {
      ParsedRevocation(SignerRevocationJson("b-key", "signingKey", kReleaseKey))};

  // One signer, withdrawn: covered. The same revocation by digest semantics never apply.
  const ModelRevocation* covering =
      CoveringRevocation(key_only, revision_digest, revision.spec, {release});
  ASSERT_NE(covering, nullptr);
  EXPECT_EQ(covering->metadata.name, "b-key");
  // Another, trusted signer still vouches for it: not covered.
  EXPECT_EQ(CoveringRevocation(key_only, revision_digest, revision.spec, {release, org}), nullptr);
  // Unsigned revisions are never covered by a signer revocation.
  EXPECT_EQ(CoveringRevocation(key_only, revision_digest, revision.spec, {}), nullptr);

  // Both signers withdrawn, one by key and one by identity: covered, by the first name.
  std::vector<ModelRevocation> both = key_only;
  both.push_back(ParsedRevocation(
      SignerRevocationJson("a-identity", "signerIdentity", "release@corp.example")));
  covering = CoveringRevocation(both, revision_digest, revision.spec, {release, org});
  ASSERT_NE(covering, nullptr);
  EXPECT_EQ(covering->metadata.name, "a-identity");

  // A digest revocation covers whatever signed it.
  std::vector<ModelRevocation> with_digest = key_only;
  with_digest.push_back(ParsedRevocation(RevocationJson(*digest)));
  covering = CoveringRevocation(with_digest, revision_digest, revision.spec, {release, org});
  ASSERT_NE(covering, nullptr);
  EXPECT_EQ(covering->metadata.name, "poisoned");
  EXPECT_FALSE(Covers(key_only.front().spec, revision_digest, revision.spec));
}

TEST(ModelRevocationTest, RevisionSpecAndStatusKeepSignaturesAndSigners) {
  ModelRevision revision = Sample();
  revision.spec.signatures = {{.bundle = R"({"mediaType": "x"})"}};
  revision.status = ModelRevisionStatus{.phase = std::string(kPhaseReady)};
  revision.status->signed_by = {
      {.signer = "release", .public_key = kReleaseKey, .identity = ""},
      {.signer = "corp", .public_key = kOrgKey, .identity = "release@corp.example"}};
  auto again = ModelRevisionFromJson(ToJson(revision));
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(again->spec, revision.spec);
  EXPECT_EQ(again->status, revision.status);
  // Signatures say who vouches for the bytes, not what runs: the digest ignores them.
  ModelRevisionSpec unsigned_spec = revision.spec;
  unsigned_spec.signatures.clear();
  EXPECT_EQ(ComputeRevisionDigest(revision.spec), ComputeRevisionDigest(unsigned_spec));
}

}  // namespace
}  // namespace modelplane::core::api
