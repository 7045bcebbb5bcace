#include "core/api/model_cache.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::core::api {
namespace {

using ::testing::HasSubstr;

const std::string kDigest = "sha256:" + std::string(64, 'b');

nlohmann::json SampleCache() {
  return {{"apiVersion", "modelplane.io/v1alpha1"},
          {"kind", "ModelCache"},
          {"metadata", {{"name", "gpu-node-1"}, {"resourceVersion", "7"}}},
          {"spec",
           {{"revisions",
             {{{"revision", {{"namespace", "models"}, {"name", "llama-r1"}}},
               {"digest", kDigest},
               {"pinned", true},
               {"reason", "in-use"}}}}}},
          {"status",
           {{"capacityBytes", 3840000000000},
            {"usedBytes", 6154944939},
            {"reservedBytes", 0},
            {"mediaBandwidthBytesPerSecond", 6500000000},
            {"peerEndpoint", "https://10.0.0.7:9443"},
            {"revisions",
             {{{"digest", kDigest},
               {"state", "Ready"},
               {"bytesDone", 6154944939},
               {"bytesTotal", 6154944939},
               {"sourceTier", "objectStore"},
               {"timestamps",
                {{"queued", "2024-05-01T12:00:00Z"},
                 {"firstByte", "2024-05-01T12:00:00.250000Z"},
                 {"lastByte", "2024-05-01T12:00:41.5Z"},
                 {"verified", "2024-05-01T12:00:42.000001Z"},
                 {"published", "2024-05-01T12:00:42.100Z"}}},
               {"lastUsed", "2024-05-01T13:00:00Z"}}}}}}};
}

TEST(ModelCacheTest, RoundTrips) {
  auto cache = ModelCacheFromJson(SampleCache());
  ASSERT_TRUE(cache.has_value()) << cache.error().message();
  EXPECT_EQ(cache->metadata.name, "gpu-node-1");
  ASSERT_EQ(cache->spec.revisions.size(), 1u);
  EXPECT_EQ(cache->spec.revisions[0].revision.namespace_name, "models");
  EXPECT_EQ(cache->spec.revisions[0].reason, kReasonInUse);
  ASSERT_TRUE(cache->status.has_value());
  const CachedRevision& cached = cache->status->revisions[0];
  EXPECT_EQ(cached.state, kCacheStateReady);
  EXPECT_EQ(*cached.timestamps.published - *cached.timestamps.queued,
            std::chrono::milliseconds(42100));
  const nlohmann::json written = ToJson(*cache);
  EXPECT_EQ(written["status"]["revisions"][0]["timestamps"]["lastByte"],
            "2024-05-01T12:00:41.500000Z");
  auto reparsed = ParseModelCache(written.dump());
  ASSERT_TRUE(reparsed.has_value()) << reparsed.error().message();
  EXPECT_EQ(*reparsed, *cache);
}

TEST(ModelCacheTest, NamesThePathOfBadFields) {
  nlohmann::json document = SampleCache();
  document["status"]["revisions"][0]["timestamps"]["verified"] = "2024-13-01T00:00:00Z";
  auto cache = ModelCacheFromJson(document);
  ASSERT_FALSE(cache.has_value());
  EXPECT_THAT(cache.error().message(),
              HasSubstr("status.revisions[0].timestamps.verified: must be an RFC 3339"));

  document = SampleCache();
  document["spec"]["revisions"][0]["revision"].erase("namespace");
  cache = ModelCacheFromJson(document);
  ASSERT_FALSE(cache.has_value());
  EXPECT_EQ(cache.error().message(), "spec.revisions[0].revision.namespace: is required");

  document = SampleCache();
  document["status"]["usedBytes"] = -1.5;
  cache = ModelCacheFromJson(document);
  ASSERT_FALSE(cache.has_value());
  EXPECT_EQ(cache.error().message(), "status.usedBytes: must be an integer");
}

TEST(ModelCacheTest, RejectsOversizedAndMalformedDocuments) {
  EXPECT_FALSE(ParseModelCache(SampleCache().dump(), {.max_bytes = 100}).has_value());
  EXPECT_FALSE(ParseModelCache("{\"spec\": [").has_value());
  auto cache = ParseModelCache(R"({"kind": "ModelRevision"})");
  ASSERT_FALSE(cache.has_value());
  EXPECT_EQ(cache.error().message(), "kind: must be ModelCache");
}

}  // namespace
}  // namespace modelplane::core::api
