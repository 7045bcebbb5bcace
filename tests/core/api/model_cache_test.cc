#include "core/api/model_cache.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::core::api {
namespace {

using ::testing::HasSubstr;

// Test constants: an allocation that throws before main ends the test binary either way.
// NOLINTBEGIN(cert-err58-cpp)
const std::string kDigest = "sha256:" + std::string(64, 'b');
const std::string kOtherDigest = "sha256:" + std::string(64, 'c');
// NOLINTEND(cert-err58-cpp)

nlohmann::json SampleCache() {
  return {
      {"apiVersion", "modelplane.io/v1alpha1"},
      {"kind", "ModelCache"},
      {"metadata", {{"name", "gpu-node-1"}, {"resourceVersion", "7"}}},
      {"spec",
       {{"revisions",
         {{{"revision", {{"namespace", "models"}, {"name", "llama-r1"}}},
           {"digest", kDigest},
           {"pinned", true},
           {"reason", "in-use"},
           {"sourcesProven", true},
           {"peers",
            {{{"node", "gpu-node-2"},
              {"endpoint", "10.0.0.8:9443"},
              {"zone", "zone-a"},
              {"state", "Ready"}},
             {{"node", "gpu-node-3"},
              {"endpoint", "10.0.0.9:9443"},
              {"state", "Staging"},
              {"files", {kOtherDigest}}}}}},
          {{"revision", {{"namespace", "models"}, {"name", "llama-r0"}}},
           {"digest", kDigest},
           {"pinned", true},
           {"reason", "rollback"},
           {"pinnedUntil", "2024-05-02T12:00:00Z"}}}},
        {"grants",
         {{{"source", "objectStore/http://s3.local/models"},
           {"streams", 6},
           {"bytesPerSecond", 100000000},
           {"expiresAt", "2024-05-01T12:00:30Z"}},
          {{"source", "http/https://origin.example"},
           {"streams", 0},
           {"expiresAt", "2024-05-01T12:00:30Z"}}}},
        {"holdings",
         {{{"digest", kDigest},
           {"peerInZone", true},
           {"peerElsewhere", false},
           {"revoked", false},
           {"forcePurge", false}}}},
        {"progressIntervalSeconds", 4}}},
      {"status",
       {{"capacityBytes", 3840000000000},
        {"usedBytes", 6154944939},
        {"reservedBytes", 0},
        {"mediaBandwidthBytesPerSecond", 6500000000},
        {"peerEndpoint", "https://10.0.0.7:9443"},
        {"zone", "zone-a"},
        {"highWatermarkBytes", 3072000000000},
        {"lowWatermarkBytes", 2688000000000},
        {"reclaimableBytes", 1000},
        {"protectedBytes", 6154944939},
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
           {"lastUsed", "2024-05-01T13:00:00Z"},
           {"uniqueBytes", 6154944939},
           {"protection", {"inUse", "wanted"}},
           {"bytesByTier", {{"objectStore", 6000000000}, {"peer", 154944939}}},
           {"sourceProofs",
            {{{"revision", {{"namespace", "models"}, {"name", "llama-r1"}}}, {"state", "Proven"}},
             {{"revision", {{"namespace", "tenant-b"}, {"name", "llama-r1"}}},
              {"state", "Failed"},
              {"reason", "PossessionNotProven"},
              {"message", "not served"}}}}},
          {{"digest", kOtherDigest},
           {"state", "Failed"},
           {"reason", "InsufficientCapacity"},
           {"message", "needs 10 bytes"}}}},
        {"sources",
         {{{"source", "objectStore/http://s3.local/models"},
           {"tier", "objectStore"},
           {"windowSeconds", 5},
           {"windowEnd", "2024-05-01T12:00:40Z"},
           {"bytesPerSecond", 250000000},
           {"peakStreams", 6},
           {"requestsOk", 120},
           {"requestsThrottled", 2},
           {"requestsFailed", 0},
           {"requestsTimedOut", 0},
           {"ttfbMilliseconds", 35},
           {"grantedStreams", 6}}}}}}};
}

TEST(ModelCacheTest, RoundTrips) {
  auto cache = ModelCacheFromJson(SampleCache());
  ASSERT_TRUE(cache.has_value()) << cache.error().message();
  EXPECT_EQ(cache->metadata.name, "gpu-node-1");
  ASSERT_EQ(cache->spec.revisions.size(), 2u);
  EXPECT_EQ(cache->spec.revisions[0].revision.namespace_name, "models");
  EXPECT_EQ(cache->spec.revisions[0].reason, kReasonInUse);
  EXPECT_FALSE(cache->spec.revisions[0].pinned_until);
  EXPECT_EQ(cache->spec.revisions[1].reason, kReasonRollback);
  ASSERT_TRUE(cache->spec.revisions[1].pinned_until);
  ASSERT_TRUE(cache->status.has_value());
  const CachedRevision& cached = cache->status->revisions[0];
  EXPECT_EQ(cached.state, kCacheStateReady);
  EXPECT_EQ(*cached.timestamps.published - *cached.timestamps.queued,
            std::chrono::milliseconds(42100));
  EXPECT_EQ(cache->status->zone, "zone-a");
  EXPECT_EQ(cache->status->reclaimable_bytes, 1000);
  EXPECT_EQ(cached.unique_bytes, 6154944939);
  EXPECT_EQ(cached.protection, (std::vector<std::string>{"inUse", "wanted"}));
  EXPECT_EQ(cache->status->revisions[1].reason, kCacheReasonInsufficientCapacity);
  ASSERT_EQ(cache->spec.grants.size(), 2u);
  EXPECT_EQ(cache->spec.grants[0].streams, 6);
  EXPECT_EQ(cache->spec.grants[0].bytes_per_second, 100000000);
  EXPECT_FALSE(cache->spec.grants[1].bytes_per_second);
  EXPECT_EQ(cached.bytes_by_tier.at("peer"), 154944939);
  EXPECT_TRUE(cache->spec.revisions[0].sources_proven);
  EXPECT_FALSE(cache->spec.revisions[1].sources_proven);
  ASSERT_EQ(cached.source_proofs.size(), 2u);
  EXPECT_EQ(cached.source_proofs[0].state, kProofStateProven);
  EXPECT_EQ(cached.source_proofs[1].revision.namespace_name, "tenant-b");
  EXPECT_EQ(cached.source_proofs[1].reason, kCacheReasonPossessionNotProven);
  ASSERT_EQ(cache->spec.revisions[0].peers.size(), 2u);
  EXPECT_EQ(cache->spec.revisions[0].peers[0].state, kPeerStateReady);
  EXPECT_TRUE(cache->spec.revisions[0].peers[0].files.empty());
  EXPECT_EQ(cache->spec.revisions[0].peers[1].files, std::vector<std::string>{kOtherDigest});
  EXPECT_TRUE(cache->spec.revisions[1].peers.empty());
  ASSERT_EQ(cache->spec.holdings.size(), 1u);
  EXPECT_TRUE(cache->spec.holdings[0].peer_in_zone);
  EXPECT_EQ(cache->spec.progress_interval_seconds, 4);
  ASSERT_EQ(cache->status->sources.size(), 1u);
  EXPECT_EQ(cache->status->sources[0].requests_throttled, 2);
  EXPECT_EQ(cache->status->sources[0].granted_streams, 6);
  const nlohmann::json written = ToJson(*cache);
  EXPECT_EQ(written["status"]["revisions"][0]["timestamps"]["lastByte"],
            "2024-05-01T12:00:41.500000Z");
  EXPECT_EQ(written["spec"]["revisions"][1]["pinnedUntil"], "2024-05-02T12:00:00Z");
  EXPECT_FALSE(written["spec"]["revisions"][0].contains("pinnedUntil"));
  EXPECT_FALSE(written["spec"]["revisions"][1].contains("peers"));
  EXPECT_FALSE(written["spec"]["revisions"][1].contains("sourcesProven"));
  EXPECT_FALSE(written["spec"]["revisions"][0]["peers"][0].contains("files"));
  auto reparsed = ParseModelCache(written.dump());
  ASSERT_TRUE(reparsed.has_value()) << reparsed.error().message();
  EXPECT_EQ(*reparsed, *cache);
}

TEST(ModelCacheTest, GrantsAloneAreWrittenForTheirOwnFieldManager) {
  auto cache = ModelCacheFromJson(SampleCache());
  ASSERT_TRUE(cache.has_value());
  const nlohmann::json grants = GrantsToJson(cache->spec.grants);
  ASSERT_EQ(grants.size(), 2u);
  EXPECT_EQ(grants[1], nlohmann::json({{"source", "http/https://origin.example"},
                                       {"streams", 0},
                                       {"expiresAt", "2024-05-01T12:00:30Z"}}));
}

TEST(ModelCacheTest, RefusesBytesByTierThatAreNotCounts) {
  nlohmann::json bad = SampleCache();
  bad["status"]["revisions"][0]["bytesByTier"]["peer"] = "many";
  auto cache = ModelCacheFromJson(bad);
  ASSERT_FALSE(cache.has_value());
  EXPECT_THAT(cache.error().message(), HasSubstr("bytesByTier"));
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

TEST(ModelCacheTest, BytesToReadyNeedsBothTimestampsInOrder) {
  const Timestamp queued(
      std::chrono::sys_days(std::chrono::year(2026) / 11 / 29).time_since_epoch());
  CachedRevision cached;
  EXPECT_FALSE(BytesToReadySeconds(cached));
  cached.timestamps.queued = queued;
  EXPECT_FALSE(BytesToReadySeconds(cached));
  cached.timestamps.published = queued + std::chrono::milliseconds(2500);
  EXPECT_EQ(BytesToReadySeconds(cached), std::optional<double>(2.5));
  cached.timestamps.published = queued - std::chrono::seconds(1);
  EXPECT_FALSE(BytesToReadySeconds(cached));
}

}  // namespace
}  // namespace modelplane::core::api
