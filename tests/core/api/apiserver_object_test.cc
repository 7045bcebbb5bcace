// Objects exactly as a kube-apiserver (v1.35) returned them after applying crds/ and the sample
// (testdata/*-from-apiserver.json, captured with `kubectl get -o json --show-managed-fields`,
// after updates to the fields the CRD leaves mutable and a status write): the parser must
// read them and write them back unchanged, and the server's defaulting must not move the digest.
#include <gtest/gtest.h>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "core/api/model_revision_validation.h"
#include "core/api/revision_digest.h"
#include "core/json/json_document.h"
#include "tests/core/api/test_support.h"

namespace modelplane::core::api {
namespace {

nlohmann::json LoadJson(const std::string& relative) {
  auto document = ParseJsonDocument(testing::ReadSourceFile(relative));
  EXPECT_TRUE(document.has_value()) << relative;
  return document.value_or(nlohmann::json());
}

TEST(ApiserverObjectTest, ModelRevisionRoundTripsAndKeepsItsDigest) {
  const nlohmann::json original =
      LoadJson("tests/core/api/testdata/modelrevision-from-apiserver.json");
  auto revision = ModelRevisionFromJson(original);
  ASSERT_TRUE(revision.has_value()) << revision.error().message();
  EXPECT_TRUE(revision->metadata.unknown_fields.contains("managedFields"));
  EXPECT_TRUE(revision->spec.revoked);
  ASSERT_TRUE(revision->status.has_value());
  EXPECT_EQ(revision->status->phase, kPhaseStaging);
  EXPECT_EQ(ToJson(*revision), original);

  // Only fields outside the digest were changed on the server, and it filled in defaults.
  EXPECT_TRUE(ValidateModelRevisionSpec(revision->spec).empty());
  auto digest = ComputeRevisionDigest(revision->spec);
  ASSERT_TRUE(digest.has_value());
  EXPECT_EQ(*digest, "sha256:1dbee88ca406ace29af1f497a5f026d97fb7a62cb1cd71db366b6054b0741fbb");
  EXPECT_EQ(*digest, revision->status->digest);
}

TEST(ApiserverObjectTest, ModelCacheRoundTrips) {
  const nlohmann::json original =
      LoadJson("tests/core/api/testdata/modelcache-from-apiserver.json");
  auto cache = ModelCacheFromJson(original);
  ASSERT_TRUE(cache.has_value()) << cache.error().message();
  EXPECT_EQ(cache->metadata.name, "gpu-node-0");
  ASSERT_TRUE(cache->status.has_value());
  EXPECT_EQ(cache->status->revisions.at(0).state, kCacheStateReady);
  EXPECT_EQ(ToJson(*cache), original);
}

}  // namespace
}  // namespace modelplane::core::api
