// EntriesBesideBase and AdapterKeysOf over in-memory informer stores: the adapter takes each
// node's base entry (reason and pin, the longest pin where several bases share a node), only
// from revisions of its own namespace, and a base wakes only its own namespace's adapters.
#include "operator/controllers/adapter_placement.h"

#include <gtest/gtest.h>

#include "core/api/model_cache.h"
#include "operator/controllers/cache_entries.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;

// A test constant: its construction cannot fail in a way that matters.
// NOLINTNEXTLINE(cert-err58-cpp)
const std::string kDigest = "sha256:" + std::string(64, 'a');

json RevisionObject(const std::string& ns, const std::string& name, const std::string& digest,
                    const std::string& base_digest = "") {
  json revision = {{"metadata", {{"namespace", ns}, {"name", name}}},
                   {"spec", json::object()},
                   {"status", {{"digest", digest}}}};
  if (!base_digest.empty()) revision["spec"]["base"] = {{"digest", base_digest}};
  return revision;
}

json Entry(const std::string& ns, const std::string& name, const std::string& reason, bool pinned,
           const std::string& until = "") {
  json entry = {{"revision", {{"namespace", ns}, {"name", name}}},
                {"digest", kDigest},
                {"reason", reason},
                {"pinned", pinned}};
  if (!until.empty()) entry["pinnedUntil"] = until;
  return entry;
}

json CacheObject(const std::string& node, json entries) {
  return {{"apiVersion", "modelplane.io/v1alpha1"},
          {"kind", "ModelCache"},
          {"metadata", {{"name", node}}},
          {"spec", {{"revisions", std::move(entries)}}}};
}

class AdapterPlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    revisions_.AddIndexer(kRevisionsByDigest, RevisionsByDigestIndex());
    revisions_.AddIndexer(kRevisionsByBaseDigest, RevisionsByBaseDigestIndex());
    caches_.AddIndexer(kCachesByRevision, CachesByRevisionIndex());
  }
  void Add(core::ObjectStore& store, json object) {
    store.Upsert(std::make_shared<const json>(std::move(object)));
  }
  std::map<std::string, EntryIntent> Beside(const std::string& ns) {
    return EntriesBesideBase(revisions_, caches_, parsed_, ns, kDigest);
  }

  core::ObjectStore revisions_;
  core::ObjectStore caches_;
  core::ParsedObjects<core::api::ModelCache> parsed_{core::api::ModelCacheFromJson};
};

TEST_F(AdapterPlacementTest, TheAdapterTakesEachNodesBaseEntryAndTheLongestPin) {
  Add(revisions_, RevisionObject("team-a", "r1", kDigest));
  Add(revisions_, RevisionObject("team-a", "r1-copy", kDigest));
  Add(revisions_, RevisionObject("team-b", "theirs", kDigest));
  Add(caches_, CacheObject("n1", json::array({Entry("team-a", "r1", "prestage", false)})));
  Add(caches_,
      CacheObject(
          "n2",
          json::array({Entry("team-a", "r1", "rollback", true, "2026-12-08T10:00:00Z"),
                       Entry("team-a", "r1-copy", "rollback", true, "2026-12-08T12:00:00Z")})));
  Add(caches_,
      CacheObject("n3",
                  json::array({Entry("team-a", "r1", "rollback", true, "2026-12-08T10:00:00Z"),
                               Entry("team-a", "r1-copy", "in-use", true)})));
  Add(caches_, CacheObject("n4", json::array({Entry("team-b", "theirs", "in-use", false)})));

  const auto entries = Beside("team-a");
  ASSERT_EQ(entries.size(), 3u) << "n4 holds only another namespace's revision";
  EXPECT_EQ(entries.at("n1").reason, "prestage");
  EXPECT_FALSE(entries.at("n1").pinned);
  ASSERT_TRUE(entries.at("n2").pinned);
  ASSERT_TRUE(entries.at("n2").pinned_until.has_value());
  EXPECT_EQ(core::api::FormatTimestamp(*entries.at("n2").pinned_until), "2026-12-08T12:00:00Z");
  EXPECT_TRUE(entries.at("n3").pinned);
  EXPECT_FALSE(entries.at("n3").pinned_until.has_value()) << "a pin without an end wins";
  EXPECT_EQ(Beside("team-c").size(), 0u);
}

TEST_F(AdapterPlacementTest, ABaseWakesItsOwnNamespacesAdaptersOnly) {
  Add(revisions_, RevisionObject("team-a", "r1", kDigest));
  Add(revisions_, RevisionObject("team-a", "lora", "sha256:" + std::string(64, 'c'), kDigest));
  Add(revisions_, RevisionObject("team-b", "lora", "sha256:" + std::string(64, 'd'), kDigest));
  EXPECT_EQ(AdapterKeysOf(revisions_, {"team-a/r1"}), std::vector<std::string>{"team-a/lora"});
  EXPECT_TRUE(AdapterKeysOf(revisions_, {"team-a/absent"}).empty());
}

}  // namespace
}  // namespace modelplane::controller
