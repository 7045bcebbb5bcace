// Converting API objects into inventory entries, and the inventory's lookups.
#include "scheduler-extender/cache_inventory.h"

#include <algorithm>
#include <memory>
#include <span>

#include <gtest/gtest.h>

#include "core/api/revision_digest.h"
#include "scheduler-extender/pod_revision.h"
#include "scheduler-extender/revision_holdings.h"

namespace modelplane::extender {
namespace {

core::api::ModelRevision SampleRevision() {
  core::api::ModelRevision revision;
  revision.metadata.name = "llama-r1";
  revision.metadata.namespace_name = "models";
  revision.spec.model_name = "llama";
  revision.spec.format = std::string(core::api::kFormatSafetensors);
  revision.spec.files = {{.path = "model-00001.safetensors",
                          .size = 1000,
                          .sha256 = "sha256:" + std::string(64, '1'),
                          .role = std::string(core::api::kRoleWeights)},
                         {.path = "config.json",
                          .size = 24,
                          .sha256 = "sha256:" + std::string(64, '2'),
                          .role = std::string(core::api::kRoleConfig)}};
  revision.spec.engine = {.name = "vllm", .version = "0.6.3"};
  revision.spec.sources = {{.name = "s3",
                            .type = std::string(core::api::kSourceObjectStore),
                            .object_store = core::api::ObjectStoreLocation{
                                .endpoint = "http://127.0.0.1:9000", .bucket = "models"}}};
  return revision;
}

TEST(CacheInventoryTest, RevisionInfoPrefersStatusAndFallsBackToTheSpec) {
  core::api::ModelRevision revision = SampleRevision();
  // No status yet: the digest is computed from the spec exactly as the operator would.
  RevisionInfo info = MakeRevisionInfo(revision);
  EXPECT_EQ(info.key, "models/llama-r1");
  EXPECT_EQ(info.bytes, 1024);
  auto expected = core::api::ComputeRevisionDigest(revision.spec);
  ASSERT_TRUE(expected) << expected.error().ToString();
  EXPECT_EQ(info.digest, *expected);

  revision.status = core::api::ModelRevisionStatus{.digest = "sha256:" + std::string(64, 'f'),
                                                   .total_bytes = 4096};
  revision.spec.revoked = true;
  info = MakeRevisionInfo(revision);
  EXPECT_EQ(info.digest, "sha256:" + std::string(64, 'f'));
  EXPECT_EQ(info.bytes, 4096);
  EXPECT_TRUE(info.revoked);

  // Revoked by digest: the operator's status.revokedBy says so, the spec does not.
  revision.spec.revoked = false;
  EXPECT_FALSE(MakeRevisionInfo(revision).revoked);
  revision.status->revoked_by = core::api::RevokedBy{.name = "poisoned"};
  EXPECT_TRUE(MakeRevisionInfo(revision).revoked);
}

TEST(CacheInventoryTest, InvalidSpecWithoutStatusHasNoDigest) {
  core::api::ModelRevision revision = SampleRevision();
  revision.spec.files[0].sha256 = "not-a-digest";
  EXPECT_EQ(MakeRevisionInfo(revision).digest, "");
}

TEST(CacheInventoryTest, NodeCacheInfoIndexesRevisionsByDigest) {
  core::api::ModelCache cache;
  cache.metadata.name = "gpu-node-3";
  EXPECT_FALSE(MakeNodeCacheInfo(cache).has_status);
  cache.status = core::api::ModelCacheStatus{
      .capacity_bytes = 1000,
      .used_bytes = 600,
      .reserved_bytes = 100,
      .revisions = {{.digest = "sha256:a", .state = "Ready", .bytes_done = 5, .bytes_total = 5},
                    {.digest = "", .state = "Pending"}}};
  const NodeCacheInfo info = MakeNodeCacheInfo(cache);
  EXPECT_EQ(info.node, "gpu-node-3");
  EXPECT_TRUE(info.has_status);
  EXPECT_EQ(info.FreeBytes(), 300);
  ASSERT_NE(info.Find("sha256:a"), nullptr);
  EXPECT_EQ(info.Find("sha256:a")->state, "Ready");
  EXPECT_EQ(info.Find(""), nullptr);
  EXPECT_EQ(info.entries.size(), 1u);
}

// A status may list a digest twice: the last entry counts, before indexing and after, and the
// index keeps one entry per digest, each findable whatever order the status gave.
TEST(CacheInventoryTest, TheLastEntryOfADigestCountsAndEveryDigestIsFound) {
  NodeCacheInfo info{.node = "gpu-0"};
  std::vector<std::string> digests;
  digests.reserve(40);
  for (int i = 0; i < 40; ++i) digests.push_back("sha256:" + std::to_string(i * 7919));
  for (const std::string& digest : digests) info.Set(digest, {.state = "Staging"});
  info.Set(digests[3], {.state = "Ready", .bytes_done = 3});
  ASSERT_NE(info.Find(digests[3]), nullptr);
  EXPECT_EQ(info.Find(digests[3])->state, "Ready") << "not indexed yet";
  info.IndexDigests();
  EXPECT_EQ(info.entries.size(), digests.size());
  EXPECT_EQ(info.digest_hashes.size(), digests.size());
  for (const std::string& digest : digests) {
    ASSERT_NE(info.Find(digest), nullptr) << digest;
    EXPECT_EQ(info.Find(digest)->state, digest == digests[3] ? "Ready" : "Staging");
  }
  EXPECT_EQ(info.Find(digests[3])->bytes_done, 3);
  EXPECT_EQ(info.Find("sha256:missing"), nullptr);
  for (std::size_t at = 0; at < info.entries.size(); ++at) {
    EXPECT_EQ(info.digest_hashes[at].key(),
              DigestHash::KeyOf(std::hash<std::string_view>{}(info.entries[at].digest.view())));
    EXPECT_EQ(info.digest_hashes[at].ready(), info.entries[at].info.state == "Ready");
  }
}

TEST(CacheInventoryTest, UpsertReplacesAndSnapshotsSurviveUpdates) {
  CacheInventory inventory;
  inventory.UpsertCache({.node = "a", .capacity_bytes = 1});
  const std::vector<std::string> nodes = {"a", "b"};
  auto before = inventory.FindCaches(nodes);
  ASSERT_EQ(before.size(), 2u);
  ASSERT_NE(before[0], nullptr);
  EXPECT_EQ(before[1], nullptr);
  inventory.UpsertCache({.node = "a", .capacity_bytes = 2});
  EXPECT_EQ(before[0]->capacity_bytes, 1);  // the reader's snapshot is unchanged
  EXPECT_EQ(inventory.FindCaches(nodes)[0]->capacity_bytes, 2);
  inventory.RemoveCache("a");
  EXPECT_EQ(inventory.FindCaches(nodes)[0], nullptr);
  EXPECT_EQ(inventory.CacheCount(), 0u);

  inventory.UpsertRevision({.key = "ns/r", .digest = "d"});
  ASSERT_NE(inventory.FindRevision("ns/r"), nullptr);
  EXPECT_EQ(inventory.RevisionCount(), 1u);
  inventory.RemoveRevision("ns/r");
  EXPECT_EQ(inventory.FindRevision("ns/r"), nullptr);
}

TEST(CacheInventoryTest, HeldBytesCountFilesOfOtherRevisionsReadyOnTheNode) {
  CacheInventory inventory;
  core::api::ModelRevision r1 = SampleRevision();
  r1.status = core::api::ModelRevisionStatus{.digest = "sha256:" + std::string(64, 'a')};
  // r2 keeps r1's weights and changes its config.
  core::api::ModelRevision r2 = SampleRevision();
  r2.metadata.name = "llama-r2";
  r2.spec.files[1].sha256 = "sha256:" + std::string(64, '3');
  r2.status = core::api::ModelRevisionStatus{.digest = "sha256:" + std::string(64, 'b')};
  inventory.UpsertRevision(MakeRevisionInfo(r1));
  inventory.UpsertRevision(MakeRevisionInfo(r2));
  const RevisionInfo wanted = *inventory.FindRevision("models/llama-r2");
  ASSERT_EQ(wanted.blobs.size(), 2u);
  NodeCacheInfo holder{.node = "gpu-0", .has_status = true};
  holder.Set(r1.status->digest, {.state = "Ready"});
  EXPECT_EQ(inventory.HeldBytes(wanted, holder), 1000) << "the shared weights";
  holder.Set(r1.status->digest, {.state = "Staging"});
  EXPECT_EQ(inventory.HeldBytes(wanted, holder), 0) << "only verified copies count";
  holder.Set(r1.status->digest, {.state = "Ready"});
  inventory.RemoveRevision("models/llama-r1");
  EXPECT_EQ(inventory.HeldBytes(wanted, holder), 0) << "a digest no revision names any more";
}

// The per-request form reads the snapshots' digest index: a file two Ready digests share counts
// once, a node's own Ready copy of the wanted digest is not "held files", null caches give 0,
// and a revision updated in place is re-indexed by its files.
TEST(CacheInventoryTest, HeldBytesForManyNodesCountsEachSharedFileOnce) {
  CacheInventory inventory;
  const std::string a = "sha256:" + std::string(64, 'a');
  const std::string b = "sha256:" + std::string(64, 'b');
  const std::string c = "sha256:" + std::string(64, 'c');
  auto blob = [](char digit, std::int64_t size) {
    return BlobInfo{.sha256 = "sha256:" + std::string(64, digit), .size = size};
  };
  inventory.UpsertRevision({.key = "ns/a", .digest = a, .blobs = {blob('1', 100), blob('2', 10)}});
  inventory.UpsertRevision({.key = "ns/b", .digest = b, .blobs = {blob('1', 100), blob('3', 1)}});
  inventory.UpsertRevision(
      {.key = "ns/c", .digest = c, .blobs = {blob('1', 100), blob('2', 10), blob('3', 1)}});
  const auto cache = [&](std::string node,
                         const std::vector<std::pair<std::string, std::string>>& held) {
    NodeCacheInfo info{.node = std::move(node), .has_status = true};
    for (const auto& [digest, state] : held) info.Set(digest, {.state = state});
    inventory.UpsertCache(std::move(info));
  };
  cache("both", {{a, "Ready"}, {b, "Ready"}});
  cache("one", {{a, "Ready"}, {b, "Staging"}});
  cache("itself", {{c, "Ready"}});
  const std::vector<std::string> nodes = {"both", "one", "itself", "unknown"};
  const auto caches = inventory.FindCaches(nodes);
  const RevisionInfo wanted = *inventory.FindRevision("ns/c");
  const auto held_bytes = [&] {
    std::vector<std::int64_t> bytes;
    for (const NodeHolding& holding : inventory.Holdings(wanted, caches)) {
      bytes.push_back(holding.held_bytes);
    }
    return bytes;
  };
  EXPECT_EQ(held_bytes(), (std::vector<std::int64_t>{111, 110, 0, 0}));
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(inventory.HeldBytes(wanted, *caches[i]), held_bytes()[i]);
  }
  // The same pass finds each node's entry for the wanted digest itself.
  const std::vector<NodeHolding> holdings = inventory.Holdings(wanted, caches);
  EXPECT_EQ(holdings[0].entry, nullptr);
  EXPECT_EQ(holdings[1].entry, nullptr);
  ASSERT_NE(holdings[2].entry, nullptr);
  EXPECT_EQ(holdings[2].entry, caches[2]->Find(c));
  EXPECT_EQ(holdings[2].entry->state, "Ready");
  EXPECT_EQ(holdings[3].entry, nullptr);

  inventory.UpsertRevision({.key = "ns/b", .digest = b, .blobs = {blob('4', 7)}});
  EXPECT_EQ(held_bytes(), (std::vector<std::int64_t>{110, 110, 0, 0}));
  EXPECT_NE(caches[0]->Find(b), nullptr);
  EXPECT_EQ(caches[0]->Find(c), nullptr);
}

// Holdings finds every node's entry for the wanted digest in a pass of its own, after the held
// bytes (revision_holdings.cc): over many nodes, chunk after chunk on one RevisionHoldings, with
// null caches, a caller's own unindexed snapshot and nodes listing the digest in every state
// among them, each answer is what the node's own look-up and HeldBytes give.
TEST(CacheInventoryTest, HoldingsOfManyNodesMatchEachNodesOwnLookUp) {
  CacheInventory inventory;
  const std::string a = "sha256:" + std::string(64, 'a');
  const std::string c = "sha256:" + std::string(64, 'c');
  auto blob = [](char digit, std::int64_t size) {
    return BlobInfo{.sha256 = "sha256:" + std::string(64, digit), .size = size};
  };
  inventory.UpsertRevision({.key = "ns/a", .digest = a, .blobs = {blob('1', 100)}});
  inventory.UpsertRevision({.key = "ns/c", .digest = c, .blobs = {blob('1', 100), blob('2', 5)}});
  const std::vector<std::string> states = {"Ready", "Staging", "Pending", "Failed"};
  std::vector<std::string> nodes;
  for (int node = 0; node < 100; ++node) {
    nodes.push_back("gpu-" + std::to_string(node));
    if (node % 7 == 3) continue;  // no ModelCache
    NodeCacheInfo info{.node = nodes.back(), .has_status = true};
    if (node % 2 == 0) info.Set(a, {.state = "Ready"});
    for (int other = 0; other < node % 5; ++other) {
      info.Set("sha256:" + std::string(63, 'e') + std::to_string(other), {.state = "Ready"});
    }
    if (node % 3 != 0) {
      info.Set(c, {.state = states[node % states.size()], .bytes_done = node, .bytes_total = 105});
    }
    inventory.UpsertCache(std::move(info));
  }
  std::vector<std::shared_ptr<const NodeCacheInfo>> caches = inventory.FindCaches(nodes);
  NodeCacheInfo own{.node = "callers-own", .has_status = true};
  own.Set(c, {.state = "Ready"});
  own.Set(a, {.state = "Ready"});
  caches[50] = std::make_shared<const NodeCacheInfo>(own);
  const RevisionInfo wanted = *inventory.FindRevision("ns/c");
  RevisionHoldings holdings_of = inventory.HoldingsOf(wanted);
  for (std::size_t first = 0; first < caches.size(); first += 32) {
    const std::span<const std::shared_ptr<const NodeCacheInfo>> chunk =
        std::span(caches).subspan(first, std::min<std::size_t>(32, caches.size() - first));
    const std::vector<NodeHolding> holdings = holdings_of.Of(chunk);
    ASSERT_EQ(holdings.size(), chunk.size());
    for (std::size_t i = 0; i < chunk.size(); ++i) {
      SCOPED_TRACE(first + i);
      if (!chunk[i]) {
        EXPECT_EQ(holdings[i].entry, nullptr);
        EXPECT_EQ(holdings[i].held_bytes, 0);
        continue;
      }
      EXPECT_EQ(holdings[i].entry, chunk[i]->Find(c));
      EXPECT_EQ(holdings[i].held_bytes, inventory.HeldBytes(wanted, *chunk[i]));
    }
  }
  EXPECT_NE(caches[1]->Find(c), nullptr);
  EXPECT_EQ(caches[1]->Find(c)->state, "Staging");
  EXPECT_EQ(inventory.HeldBytes(wanted, *caches[2]), 100);
}

TEST(PodRevisionTest, AnnotationNamesARevisionOfThePodsOwnNamespace) {
  PodSummary pod{.namespace_name = "serving", .name = "p"};
  EXPECT_EQ(RevisionOfPod(pod).kind, PodRevision::Kind::kNone);
  pod.annotations["modelplane.io/revision"] = "llama-r1";
  EXPECT_EQ(RevisionOfPod(pod).kind, PodRevision::Kind::kNamed);
  EXPECT_EQ(RevisionOfPod(pod).key, "serving/llama-r1");
  pod.annotations["modelplane.io/revision"] = "serving/llama-r2";
  EXPECT_EQ(RevisionOfPod(pod).key, "serving/llama-r2");
  // Another namespace's revision (an annotation edited after admission) is never scored for.
  pod.annotations["modelplane.io/revision"] = "models/llama-r1";
  EXPECT_EQ(RevisionOfPod(pod).kind, PodRevision::Kind::kMalformed);
  EXPECT_NE(RevisionOfPod(pod).problem.find("own namespace"), std::string::npos);
  for (const char* bad : {"", "/", "models/", "/llama", "a/b/c", "Llama", "llama r1"}) {
    pod.annotations["modelplane.io/revision"] = bad;
    const PodRevision named = RevisionOfPod(pod);
    EXPECT_EQ(named.kind, PodRevision::Kind::kMalformed) << bad;
    EXPECT_FALSE(named.problem.empty()) << bad;
  }
}

}  // namespace
}  // namespace modelplane::extender
