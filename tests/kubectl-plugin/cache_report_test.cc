#include "kubectl-plugin/cache_report.h"

#include <gtest/gtest.h>

#include "tests/kubectl-plugin/test_objects.h"

namespace modelplane::cli {
namespace {

using nlohmann::json;

std::string Render(const json& cache) {
  auto text = RenderCache(cache, testing::Now());
  EXPECT_TRUE(text) << text.error().ToString();
  if (text) {
    EXPECT_TRUE(testing::FitsTerminal(*text)) << *text;
  }
  return text ? *text : "";
}

std::string RowOf(const std::string& text, const std::string& start) {
  for (const std::string& line : testing::Lines(text)) {
    if (line.starts_with(start)) return line;
  }
  return "";
}

json NodeCache() {
  json pinned = testing::SpecEntry("llama-r1", testing::kOtherDigest, "rollback", true);
  pinned["pinnedUntil"] = "2026-01-01T14:30:00Z";
  json in_use =
      testing::CachedEntry(testing::kDigest, "Ready", 140 * testing::kGiB, 140 * testing::kGiB);
  in_use["uniqueBytes"] = 100 * testing::kGiB;
  in_use["protection"] = {"inUse", "wanted"};
  json old = testing::CachedEntry(testing::kOtherDigest, "Ready", 130 * testing::kGiB,
                                  130 * testing::kGiB);
  old["uniqueBytes"] = 90 * testing::kGiB;
  old["protection"] = {"pinned", "wanted"};
  const std::string stray_digest = std::string("sha256:") + std::string(64, 'c');
  json stray = testing::CachedEntry(stray_digest, "Ready", 20 * testing::kGiB, 20 * testing::kGiB);
  stray["uniqueBytes"] = 20 * testing::kGiB;
  json refused = testing::CachedEntry(std::string("sha256:") + std::string(64, 'd'), "Failed", 0,
                                      900 * testing::kGiB);
  refused["reason"] = "InsufficientCapacity";
  refused["message"] = "needs 900.0 GiB; 120.0 GiB could be freed";
  json cache = testing::Cache(
      "gpu-a",
      json::array({testing::SpecEntry("llama-r2", testing::kDigest, "in-use"), pinned,
                   testing::SpecEntry("mistral", std::string("sha256:") + std::string(64, 'e'),
                                      "prestage", false, "team-b")}),
      json::array({in_use, old, stray, refused}));
  cache["status"]["zone"] = "zone-a";
  cache["status"]["peerEndpoint"] = "10.0.0.7:9443";
  cache["status"]["highWatermarkBytes"] = 800 * testing::kGiB;
  cache["status"]["lowWatermarkBytes"] = 700 * testing::kGiB;
  cache["status"]["reclaimableBytes"] = 20 * testing::kGiB;
  cache["status"]["protectedBytes"] = 190 * testing::kGiB;
  return cache;
}

TEST(CacheReportTest, ShowsCapacityAndEachRevisionsStatePinAndProtection) {
  const std::string text = Render(NodeCache());
  EXPECT_NE(text.find("ModelCache:     gpu-a (zone zone-a, peers fetch from 10.0.0.7:9443)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Capacity:       1.0 TiB; used 400.0 GiB (39%), reserved 10.0 GiB, free "
                      "614.0 GiB"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Watermarks:     evicts above 800.0 GiB, down to 700.0 GiB"),
            std::string::npos);
  EXPECT_NE(text.find("Eviction:       20.0 GiB reclaimable; 190.0 GiB protected"),
            std::string::npos);

  const std::string in_use = RowOf(text, "team-a/llama-r2 ");
  EXPECT_NE(in_use.find("Ready"), std::string::npos) << in_use;
  EXPECT_NE(in_use.find("140.0 GiB"), std::string::npos) << in_use;
  EXPECT_NE(in_use.find("100.0 GiB"), std::string::npos) << in_use;
  EXPECT_NE(in_use.find("in-use"), std::string::npos) << in_use;
  EXPECT_NE(in_use.find("inUse,wanted"), std::string::npos) << in_use;

  const std::string pinned = RowOf(text, "team-a/llama-r1 ");
  EXPECT_NE(pinned.find("rollback pin 2h30m"), std::string::npos) << pinned;
  EXPECT_NE(pinned.find("pinned,wanted"), std::string::npos) << pinned;

  // A digest no spec entry names is shown by its digest, and is what eviction may take.
  const std::string stray = RowOf(text, "sha256:cccccccccccc ");
  EXPECT_NE(stray.find("evictable"), std::string::npos) << text;

  const std::string asked = RowOf(text, "team-b/mistral ");
  EXPECT_NE(asked.find("Requested"), std::string::npos) << asked;
  EXPECT_NE(text.find("team-b/mistral: asked for; the node agent has not reported it yet"),
            std::string::npos);
  EXPECT_NE(text.find("sha256:dddddddddddd: InsufficientCapacity: needs 900.0 GiB"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Evictable now: 1 revision freeing 20.0 GiB"), std::string::npos) << text;
}

TEST(CacheReportTest, ALapsedPinSaysSo) {
  json cache = NodeCache();
  cache["spec"]["revisions"][1]["pinnedUntil"] = "2026-01-01T11:00:00Z";
  EXPECT_NE(RowOf(Render(cache), "team-a/llama-r1 ").find("rollback pin lapsed"),
            std::string::npos);
}

TEST(CacheReportTest, ACacheWithoutStatusPointsAtTheAgent) {
  json cache = testing::Cache("gpu-z", json::array(), json::array());
  cache.erase("status");
  const std::string text = Render(cache);
  EXPECT_NE(text.find("not reported: the node agent on gpu-z has not written status"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("It holds no revision and is asked for none."), std::string::npos);
}

TEST(CacheReportTest, AStaleStatusIsFlagged) {
  json cache = NodeCache();
  cache["metadata"]["generation"] = 3;
  EXPECT_NE(Render(cache).find("of generation 1, the spec is at 3"), std::string::npos);
}

TEST(CacheReportTest, AStagingRevisionShowsItsProgress) {
  json cache =
      testing::Cache("gpu-b", json::array(),
                     json::array({testing::CachedEntry(testing::kDigest, "Staging",
                                                       35 * testing::kGiB, 140 * testing::kGiB)}));
  const std::string row = RowOf(Render(cache), "sha256:1dbee88ca406 ");
  EXPECT_NE(row.find("25% of 140.0 GiB"), std::string::npos) << row;
  EXPECT_EQ(row.find("evictable"), std::string::npos) << "a staging is reserved: " << row;
}

}  // namespace
}  // namespace modelplane::cli
