// Retention in the real `modelplane-node-agent run` process, on a real small filesystem: a
// 200 MiB tmpfs the test mounts as the cache root, against the local control plane
// (scripts/test.sh starts it). Needs root for the mount; skipped otherwise.
//
// The cache starts at 84% (four revisions staged through the store's API before the agent
// starts), above the 80% high watermark. One revision is pinned (a rollback entry in the
// node's ModelCache spec), one is in use (a pod on this node names it), two are neither. The
// agent must evict down to the 70% low watermark, taking the unprotected revision worth least
// per byte first (of two equally used ones, the larger: each byte of it costs less to fetch
// again), keep everything protected, report unique bytes and protection classes, refuse a
// staging that cannot fit without touching protected revisions (InsufficientCapacity) without
// evicting anything for it, and leave a consistent store behind, also after a kill -9 halfway
// through a paced eviction.
//
// The agent repairs its ModelCache's status when another writer replaces it, and its loop wakes
// only for what concerns its node.
//
// The same agent process checks the source policy: a revision whose shared-filesystem path lies
// outside the allowed roots, or reaches out of them through a symlink, is not staged even though
// the bytes there would verify, and nothing of it reaches the store. It verifies model
// signatures too (bundles made by the real model_signing tool): a revision whose signature no
// trusted signer made, made with an expired certificate, over a statement edited after signing,
// or missing where its namespace requires one is refused with its reason and nothing of it is
// read; a well-signed one stages.
#include <gtest/gtest.h>

#include "tests/node-agent/eviction/cluster/agent_eviction_cluster_fixture.h"
#include "tests/support/signing_fixtures.h"

namespace modelplane::agent {
namespace {

using core::testing::WaitUntil;
using nlohmann::json;
using testing::AgentEvictionClusterTest;
using testing::kFilesystemBytes;
using testing::kMiB;
using testing::kWait;
using testing::TestRevision;

// Watches `type` from `from` until the object version `until` arrives (the server ends the
// watch after 30 s at the latest): true once it has, when every watcher of those writes has
// been sent them.
bool Delivered(const core::Watcher& watcher, const core::ResourceType& type,
               const std::string& namespace_name, const std::string& from,
               const std::string& until) {
  bool seen = false;
  core::CancellationToken never;
  (void)watcher.Watch(
      type, namespace_name, {.resource_version = from, .timeout_seconds = 30},
      [&](const core::WatchEvent& event) -> core::Status {
        if (event.object.contains("metadata") &&
            event.object["metadata"].value("resourceVersion", "") == until) {
          seen = true;
          return std::unexpected(core::Error(core::ErrorCode::kCancelled, "delivered"));
        }
        return core::Ok();
      },
      never);
  return seen;
}

TEST_F(AgentEvictionClusterTest, EvictsToTheLowWatermarkKeepingWhatIsProtected) {
  const TestRevision a = MakeRevision("model-a", 40 * kMiB);
  const TestRevision pinned = MakeRevision("model-b", 40 * kMiB);
  const TestRevision in_use = MakeRevision("model-c", 40 * kMiB);
  const TestRevision large = MakeRevision("model-d", 48 * kMiB);
  ASSERT_FALSE(HasFailure());
  StageAll({&a, &pinned, &in_use, &large});  // 168 MiB of 200: 84%
  ASSERT_FALSE(HasFatalFailure());

  // The previous revision of a rollout, pinned for its rollback window; a pod on the node.
  auto cache =
      client_->Create(core::resources::ModelCaches(), "",
                      {{"apiVersion", "modelplane.io/v1alpha1"},
                       {"kind", "ModelCache"},
                       {"metadata", {{"name", node_}}},
                       {"spec", {{"revisions", json::array({Entry(pinned, true, "rollback")})}}}});
  ASSERT_TRUE(cache) << cache.error().ToString();
  CreatePod("server-c", in_use.name);
  ASSERT_FALSE(HasFatalFailure());
  StartAgent();
  ASSERT_FALSE(HasFatalFailure());

  // Down to the low watermark (140 MiB): one eviction is enough, and it takes the larger of
  // the two unprotected revisions (equal uses and refetch rate: it is worth less per byte).
  std::optional<core::api::ModelCacheStatus> status;
  ASSERT_TRUE(WaitUntil(
      [&] {
        status = Status();
        return status && status->high_watermark_bytes > 0 && Find(*status, large) == nullptr &&
               status->used_bytes <= status->low_watermark_bytes;
      },
      kWait))
      << (status ? json(core::api::ToJson(core::api::ModelCache{.status = status})).dump(2) : "")
      << "\n"
      << Log();
  EXPECT_EQ(status->high_watermark_bytes, static_cast<std::int64_t>(kFilesystemBytes * 8 / 10));
  EXPECT_EQ(status->low_watermark_bytes, static_cast<std::int64_t>(kFilesystemBytes * 7 / 10));
  for (const TestRevision* kept : {&a, &pinned, &in_use}) {
    const core::api::CachedRevision* entry = Find(*status, *kept);
    ASSERT_NE(entry, nullptr) << kept->name << " was evicted\n" << Log();
    EXPECT_EQ(entry->state, core::api::kCacheStateReady) << kept->name;
    EXPECT_EQ(entry->unique_bytes, static_cast<std::int64_t>(kept->bytes)) << kept->name;
  }
  EXPECT_TRUE(Has(Find(*status, pinned)->protection, core::api::kProtectionPinned));
  EXPECT_TRUE(Has(Find(*status, in_use)->protection, core::api::kProtectionInUse));
  EXPECT_TRUE(Find(*status, a)->protection.empty());
  EXPECT_TRUE(Find(*status, in_use)->last_used.has_value());

  // A staging that could fit only by evicting protected revisions is refused with its reason,
  // and the evictable one is not sacrificed for it.
  const TestRevision huge = MakeRevision("model-e", 150 * kMiB);
  ASSERT_FALSE(HasFailure());
  auto patched = client_->Patch(core::resources::ModelCaches(), "", node_, core::PatchType::kMerge,
                                {{"spec",
                                  {{"revisions", json::array({Entry(pinned, true, "rollback"),
                                                              Entry(huge, false, "prestage")})}}}});
  ASSERT_TRUE(patched) << patched.error().ToString();
  const core::api::CachedRevision* refused = nullptr;
  ASSERT_TRUE(WaitUntil(
      [&] {
        status = Status();
        refused = status ? Find(*status, huge) : nullptr;
        return refused != nullptr && refused->state == core::api::kCacheStateFailed;
      },
      kWait))
      << Log();
  EXPECT_EQ(refused->reason, core::api::kCacheReasonInsufficientCapacity) << refused->message;
  EXPECT_FALSE(refused->message.empty());
  EXPECT_NE(Find(*status, a), nullptr) << "evicted for a staging that could not fit anyway";
  EXPECT_NE(Find(*status, in_use), nullptr);

  // The store left behind is consistent: every manifest's blobs are there, the evicted
  // revision's manifest and unique blob are gone.
  StopAgent();
  auto store = CacheStore::Open({.root = base_ / "cache", .headroom_bytes = 0});
  ASSERT_TRUE(store) << store.error().ToString();
  ExpectConsistent(**store);
  EXPECT_FALSE((*store)->FindRevision(large.digest).has_value());
  for (const auto& [path, content] : large.files) {
    EXPECT_FALSE((*store)->HasBlob(core::Sha256Of(content))) << path;
  }
  for (const TestRevision* kept : {&a, &pinned, &in_use}) {
    EXPECT_TRUE((*store)->FindRevision(kept->digest).has_value()) << kept->name;
  }
}

// A rollout from r1 to r2 on a node that holds both: r2 serves (a pod uses it), r1 is pinned
// for its rollback window as the operator pins it (reason rollback, pinnedUntil), and a third
// revision the node is asked to keep fills the cache past its high watermark. r1 is the only
// revision eviction may take, and it stays until its window ends; then it goes, because the
// room is needed, and the others stay.
TEST_F(AgentEvictionClusterTest, ARollbackWindowKeepsThePreviousRevisionUntilItEnds) {
  const TestRevision r1 = MakeRevision("llama-r1", 60 * kMiB);
  const TestRevision r2 = MakeRevision("llama-r2", 60 * kMiB);
  const TestRevision other = MakeRevision("other-model", 48 * kMiB);
  ASSERT_FALSE(HasFailure());
  StageAll({&r1, &r2, &other});  // 168 MiB of 200: 84%
  ASSERT_FALSE(HasFatalFailure());

  constexpr auto kWindow = std::chrono::seconds(8);
  const auto window_end = std::chrono::system_clock::now() + kWindow;
  json rollback = Entry(r1, true, "rollback");
  rollback["pinnedUntil"] = core::api::FormatTimestamp(
      std::chrono::time_point_cast<std::chrono::microseconds>(window_end));
  CreateCache(node_,
              json::array({rollback, Entry(r2, false, "in-use"), Entry(other, false, "prestage")}));
  ASSERT_FALSE(HasFatalFailure());
  CreatePod("server-r2", r2.name);
  ASSERT_FALSE(HasFatalFailure());
  StartAgent();
  ASSERT_FALSE(HasFatalFailure());

  // Inside the window: r1 is pinned and stays, although the cache is above its high watermark.
  std::optional<core::api::ModelCacheStatus> status;
  ASSERT_TRUE(WaitUntil(
      [&] {
        status = Status();
        const core::api::CachedRevision* entry = status ? Find(*status, r1) : nullptr;
        return entry != nullptr && Has(entry->protection, core::api::kProtectionPinned);
      },
      kWait))
      << Log();
  EXPECT_GT(status->used_bytes, status->high_watermark_bytes);
  // Three more passes of the loop, each of which weighs eviction (retention looks every 500 ms
  // here); an eviction begun in any but the last would be in the status by then (it is written
  // every 200 ms when it changes).
  const auto passes = Reconciles();
  ASSERT_TRUE(passes) << Log();
  ASSERT_TRUE(WaitUntil(
      [&] {
        const auto now = Reconciles();
        return now && *now >= *passes + 3;
      },
      kWait))
      << Log();
  if (std::chrono::system_clock::now() < window_end - std::chrono::seconds(1)) {
    status = Status();
    ASSERT_TRUE(status);
    const core::api::CachedRevision* entry = Find(*status, r1);
    ASSERT_NE(entry, nullptr) << "evicted inside its rollback window\n" << Log();
    EXPECT_NE(entry->state, core::api::kCacheStateEvicting)
        << "evicting inside its rollback window\n"
        << Log();
  }

  // After the window: r1 goes for room; r2 (in use) and the other model (wanted) stay.
  ASSERT_TRUE(WaitUntil(
      [&] {
        status = Status();
        return status && Find(*status, r1) == nullptr &&
               status->used_bytes <= status->low_watermark_bytes;
      },
      kWait + kWindow))
      << Log();
  EXPECT_GE(std::chrono::system_clock::now(), window_end);
  for (const TestRevision* kept : {&r2, &other}) {
    const core::api::CachedRevision* entry = Find(*status, *kept);
    ASSERT_NE(entry, nullptr) << kept->name << " was evicted\n" << Log();
    EXPECT_EQ(entry->state, core::api::kCacheStateReady) << kept->name;
  }
  EXPECT_TRUE(Has(Find(*status, r2)->protection, core::api::kProtectionInUse));
}

// kill -9 while a paced eviction is halfway through a revision's blobs: the store the next
// start finds lists only revisions whose every blob is there (the victim's manifest went
// first, so it is not Ready with half its blobs), and its leftover blobs, referenced by no
// revision, are the first to go at the next eviction.
TEST_F(AgentEvictionClusterTest, AKillDuringEvictionLeavesAConsistentStore) {
  const TestRevision a = MakeRevision("model-a", 40 * kMiB);
  const TestRevision b = MakeRevision("model-b", 40 * kMiB);
  const TestRevision c = MakeRevision("model-c", 40 * kMiB);
  const TestRevision victim = MakeRevision("model-d", 48 * kMiB, 6);  // 6 blobs of 8 MiB
  ASSERT_FALSE(HasFailure());
  StageAll({&a, &b, &c, &victim});  // 84%: the larger revision goes first
  ASSERT_FALSE(HasFatalFailure());
  StartAgent(8 * kMiB);  // one blob a second
  ASSERT_FALSE(HasFatalFailure());
  // Killed once two of the victim's six blobs are gone from the disk: paced at one a second,
  // the other four need seconds more, so the kill lands mid-eviction (checked below).
  const auto victim_blobs_on_disk = [&] {
    std::size_t count = 0;
    for (const auto& [path, content] : victim.files) {
      const std::string digest = core::FormatDigest(core::Sha256Of(content));
      count += std::filesystem::exists(base_ / "cache" / "blobs" / "sha256" / digest.substr(7));
    }
    return count;
  };
  ASSERT_TRUE(WaitUntil([&] { return victim_blobs_on_disk() <= victim.files.size() - 2; }, kWait))
      << Log();
  KillAgent();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(Count("event=eviction_finished"), 0u) << "the kill came too late\n" << Log();

  std::size_t victim_blobs_left = 0;
  {
    auto store = CacheStore::Open({.root = base_ / "cache", .headroom_bytes = 0});
    ASSERT_TRUE(store) << store.error().ToString();
    ExpectConsistent(**store);
    EXPECT_FALSE((*store)->FindRevision(victim.digest).has_value());
    for (const auto& [path, content] : victim.files) {
      victim_blobs_left += (*store)->HasBlob(core::Sha256Of(content)) ? 1 : 0;
    }
    for (const TestRevision* kept : {&a, &b, &c}) {
      EXPECT_TRUE((*store)->FindRevision(kept->digest).has_value()) << kept->name;
    }
  }
  // Halfway: some of its blobs gone, some left.
  EXPECT_GT(victim_blobs_left, 0u);
  EXPECT_LT(victim_blobs_left, victim.files.size());

  // The leftovers hold the cache at 76%, between the watermarks, so nothing needs to go. With
  // the high watermark at 75% the next eviction is due: the unreferenced leftovers go first,
  // and that is enough (60%), so no revision is touched.
  StartAgent(0, 75);
  ASSERT_FALSE(HasFatalFailure());
  std::optional<core::api::ModelCacheStatus> status;
  ASSERT_TRUE(WaitUntil(
      [&] {
        status = Status();
        return status && status->high_watermark_bytes > 0 &&
               status->used_bytes <= status->low_watermark_bytes && Find(*status, a) != nullptr &&
               Find(*status, b) != nullptr && Find(*status, c) != nullptr;
      },
      kWait))
      << Log();
  EXPECT_EQ(Find(*status, victim), nullptr);
  StopAgent();
  auto store = CacheStore::Open({.root = base_ / "cache", .headroom_bytes = 0});
  ASSERT_TRUE(store) << store.error().ToString();
  ExpectConsistent(**store);
  for (const auto& [path, content] : victim.files) {
    EXPECT_FALSE((*store)->HasBlob(core::Sha256Of(content))) << path;
  }
}

TEST_F(AgentEvictionClusterTest, RevisionsThePolicyRefusesAreNotStagedAndNothingIsRead) {
  // What a tenant should not read, laid out so that reading it would verify: the files of the
  // revision, outside the share, and a symlink on the share that leads there.
  const std::filesystem::path secret = base_ / "secret";
  const std::filesystem::path share = base_ / "share";
  std::filesystem::create_directories(share);
  std::filesystem::create_symlink(secret, share / "evil");
  const json outside = json::array({{{"name", "nfs"},
                                     {"type", "sharedFilesystem"},
                                     {"sharedFilesystem", {{"path", secret.string()}}}}});
  const json through_link =
      json::array({{{"name", "nfs"},
                    {"type", "sharedFilesystem"},
                    {"sharedFilesystem", {{"path", (share / "evil").string()}}}}});
  const TestRevision refused = MakeRevision("model-outside", 4 * kMiB, 1, outside);
  const TestRevision linked = MakeRevision("model-linked", 4 * kMiB, 1, through_link);
  ASSERT_FALSE(HasFailure());
  for (const TestRevision* revision : {&refused, &linked}) {
    for (const auto& [path, content] : revision->files) {
      std::filesystem::create_directories(secret);
      std::ofstream(secret / path) << content;
    }
  }
  auto cache = client_->Create(
      core::resources::ModelCaches(), "",
      {{"apiVersion", "modelplane.io/v1alpha1"},
       {"kind", "ModelCache"},
       {"metadata", {{"name", node_}}},
       {"spec",
        {{"revisions",
          json::array({Entry(refused, false, "prestage"), Entry(linked, false, "prestage")})}}}});
  ASSERT_TRUE(cache) << cache.error().ToString();
  source_policy_ = fmt::format("{{sharedFilesystems: [{{root: {}}}]}}", share.string());
  StartAgent();
  ASSERT_FALSE(HasFatalFailure());

  std::optional<core::api::ModelCacheStatus> status;
  ASSERT_TRUE(WaitUntil(
      [&] {
        status = Status();
        if (!status) return false;
        const auto* first = Find(*status, refused);
        const auto* second = Find(*status, linked);
        return first != nullptr && second != nullptr &&
               first->state == core::api::kCacheStateFailed &&
               second->state == core::api::kCacheStateFailed;
      },
      kWait))
      << Log();
  const auto* denied = Find(*status, refused);
  EXPECT_EQ(denied->reason, core::api::kCacheReasonSourcePolicyDenied);
  EXPECT_NE(denied->message.find("below no sharedFilesystems root"), std::string::npos)
      << denied->message;
  EXPECT_EQ(denied->bytes_done, 0u);
  // Allowed by its path, refused by where the path leads: the open beneath the root fails. The
  // status says so with a fixed reason; where the link leads stays in the agent's log.
  const auto* escaped = Find(*status, linked);
  EXPECT_EQ(escaped->reason, core::api::kCacheReasonSourceAccessDenied) << escaped->message;
  EXPECT_EQ(escaped->message.find(secret.string()), std::string::npos) << escaped->message;
  EXPECT_NE(Log().find("escapes"), std::string::npos);
  EXPECT_EQ(escaped->bytes_done, 0u);
  StopAgent();
  auto store = CacheStore::Open({.root = base_ / "cache", .headroom_bytes = 0});
  ASSERT_TRUE(store) << store.error().ToString();
  for (const TestRevision* revision : {&refused, &linked}) {
    EXPECT_FALSE((*store)->FindRevision(revision->digest).has_value()) << revision->name;
    for (const auto& [path, content] : revision->files) {
      EXPECT_FALSE((*store)->HasBlob(core::Sha256Of(content))) << revision->name;
    }
  }
}

TEST_F(AgentEvictionClusterTest, SignaturesAreVerifiedBeforeAnythingIsRead) {
  // The signed model on a share the policy allows: reading it would verify.
  const std::filesystem::path share = base_ / "share";
  std::filesystem::create_directories(share);
  std::filesystem::copy(std::string(MODELPLANE_SOURCE_DIR) + "/tests/core/signing/fixtures/model",
                        share / "model", std::filesystem::copy_options::recursive);
  source_policy_ = fmt::format("\n  sharedFilesystems: [{{root: {}}}]\n{}", share.string(),
                               modelplane::testing::SignaturePolicyYaml(2, {namespace_}));
  // Each revision names the same signed files; the engine version (in the digest, not in the
  // signed statement) keeps their digests apart.
  // `bundle`: the bundle's text, empty for none.
  auto create = [&](const std::string& name, const std::string& bundle) {
    json spec = {
        {"files", modelplane::testing::SignedModelFiles()},
        {"format", "safetensors"},
        {"engine", {{"name", "vllm"}, {"version", name}}},
        {"sources", json::array({{{"name", "nfs"},
                                  {"type", "sharedFilesystem"},
                                  {"sharedFilesystem", {{"path", (share / "model").string()}}}}})}};
    if (!bundle.empty()) {
      spec["signatures"] = json::array({{{"bundle", bundle}}});
    }
    const json object = {{"apiVersion", "modelplane.io/v1alpha1"},
                         {"kind", "ModelRevision"},
                         {"metadata", {{"name", name}, {"namespace", namespace_}}},
                         {"spec", spec}};
    TestRevision revision{.name = name};
    auto created = client_->Create(core::resources::ModelRevisions(), namespace_, object);
    EXPECT_TRUE(created) << created.error().ToString();
    if (!created) return revision;
    auto loaded = CheckRevision(*core::api::ModelRevisionFromJson(*created));
    EXPECT_TRUE(loaded) << loaded.error().ToString();
    if (loaded) revision.digest = loaded->digest;
    return revision;
  };
  using modelplane::testing::SigningFixture;
  const TestRevision untrusted = create("untrusted", SigningFixture("bundle-key-untrusted.json"));
  const TestRevision expired = create("expired", SigningFixture("bundle-certificate-expired.json"));
  const TestRevision tampered =
      create("tampered", modelplane::testing::TamperedSigningFixture("bundle-key-p256.json"));
  const TestRevision unsigned_revision = create("unsigned", "");
  ASSERT_FALSE(HasFailure());
  CreateCache(node_,
              json::array({Entry(untrusted, false, "prestage"), Entry(expired, false, "prestage"),
                           Entry(tampered, false, "prestage"),
                           Entry(unsigned_revision, false, "prestage")}));
  ASSERT_FALSE(HasFatalFailure());
  StartAgent();
  ASSERT_FALSE(HasFatalFailure());

  const std::vector<std::pair<const TestRevision*, std::string_view>> expected = {
      {&untrusted, "SignatureUntrusted"},
      {&expired, "SignatureCertificateExpired"},
      {&tampered, "SignatureInvalid"},
      {&unsigned_revision, "SignatureRequired"}};
  std::optional<core::api::ModelCacheStatus> status;
  ASSERT_TRUE(WaitUntil(
      [&] {
        status = Status();
        return status && std::ranges::all_of(expected, [&](const auto& item) {
                 const auto* entry = Find(*status, *item.first);
                 return entry != nullptr && entry->state == core::api::kCacheStateFailed;
               });
      },
      kWait))
      << Log();
  for (const auto& [revision, reason] : expected) {
    const auto* entry = Find(*status, *revision);
    EXPECT_EQ(entry->reason, reason) << revision->name << ": " << entry->message;
    EXPECT_EQ(entry->bytes_done, 0U) << revision->name;
  }
  StopAgent();  // the store is the agent's while it runs
  {
    auto store = CacheStore::Open({.root = base_ / "cache", .headroom_bytes = 0});
    ASSERT_TRUE(store) << store.error().ToString();
    for (const json& file : modelplane::testing::SignedModelFiles()) {
      auto digest = core::ParseDigest(file["sha256"].get<std::string>());
      ASSERT_TRUE(digest);
      EXPECT_FALSE((*store)->HasBlob(*digest)) << file.dump();
    }
  }

  // The same files under a trusted key's signature stage from that share.
  const TestRevision trusted = create("trusted", SigningFixture("bundle-key-p256.json"));
  ASSERT_FALSE(HasFailure());
  auto patched =
      client_->Patch(core::resources::ModelCaches(), "", node_, core::PatchType::kMerge,
                     {{"spec", {{"revisions", json::array({Entry(trusted, false, "prestage")})}}}});
  ASSERT_TRUE(patched) << patched.error().ToString();
  StartAgent();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_TRUE(WaitUntil(
      [&] {
        status = Status();
        const auto* entry = status ? Find(*status, trusted) : nullptr;
        return entry != nullptr && entry->state == core::api::kCacheStateReady;
      },
      kWait))
      << Log();
}

// The agent owns its ModelCache's status: when another writer replaces it (here a merge patch
// that empties the revisions and forges the capacity), the agent's next pass writes it back,
// though nothing the agent computes has changed.
TEST_F(AgentEvictionClusterTest, AStatusAnotherWriterReplacesIsRepaired) {
  const TestRevision held = MakeRevision("model-held", 4 * kMiB);
  ASSERT_FALSE(HasFailure());
  StageAll({&held});
  CreateCache(node_, json::array({Entry(held, false, "prestage")}));
  ASSERT_FALSE(HasFatalFailure());
  StartAgent();
  ASSERT_FALSE(HasFatalFailure());
  const auto ready = [&] {
    const auto status = Status();
    if (!status || status->capacity_bytes == 1) return false;
    const auto* entry = Find(*status, held);
    return entry != nullptr && entry->state == core::api::kCacheStateReady;
  };
  ASSERT_TRUE(WaitUntil(ready, kWait)) << Log();
  // Let the first passes settle (their statuses may still differ from one another): the
  // repair must be what rewrites the status, not a change the agent would write anyway.
  std::string version;
  int unchanged = 0;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto object = client_->Get(core::resources::ModelCaches(), "", node_);
        const std::string now = object ? (*object)["metadata"].value("resourceVersion", "") : "";
        unchanged = now == version ? unchanged + 1 : 0;
        version = now;
        if (unchanged < 4) std::this_thread::sleep_for(std::chrono::milliseconds(250));
        return unchanged >= 4;  // a second without a write: 5 status intervals
      },
      kWait))
      << Log();

  auto replaced = client_->Patch(core::resources::ModelCaches(), "", node_, core::PatchType::kMerge,
                                 {{"status", {{"revisions", json::array()}, {"capacityBytes", 1}}}},
                                 {.subresource = "status"});
  ASSERT_TRUE(replaced) << replaced.error().ToString();
  ASSERT_TRUE(WaitUntil(ready, kWait)) << Log();
  // The agent logs the repair after its write lands, so the line may trail the status we saw.
  EXPECT_TRUE(WaitUntil([&] { return Count("event=model_cache_status_rewritten") > 0; }, kWait))
      << Log();
}

// An agent's loop wakes for its own ModelCache, not for any other write in the fleet: other
// nodes' ModelCache status writes and changes to revisions, even one it holds, leave it asleep
// (retention's own timer is set long here, so nothing else wakes it). Revocation reaches it
// through its own ModelCache (spec.holdings, written by the operator), which does wake it.
TEST_F(AgentEvictionClusterTest, OnlyItsOwnCacheWakesTheLoop) {
  const TestRevision held = MakeRevision("model-held", 4 * kMiB);
  const TestRevision unrelated = MakeRevision("model-elsewhere", 4 * kMiB);
  ASSERT_FALSE(HasFailure());
  StageAll({&held});
  CreateCache(node_, json::array({Entry(held, false, "prestage")}));
  ASSERT_FALSE(HasFatalFailure());
  const std::string other_node = node_ + "-other";
  CreateCache(other_node, json::array());
  ASSERT_FALSE(HasFatalFailure());
  StartAgent(0, 80, "1h");
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_TRUE(WaitUntil(
      [&] {
        const auto status = Status();
        const auto* entry = status ? Find(*status, held) : nullptr;
        return entry != nullptr && entry->state == core::api::kCacheStateReady;
      },
      kWait))
      << Log();
  // Settled: two readings a second apart agree (settled is the absence of passes, which only a
  // window shows; the agent is Ready first, so the window starts after its start-up passes).
  std::optional<double> before;
  ASSERT_TRUE(WaitUntil(
      [&] {
        const auto first = Reconciles();
        std::this_thread::sleep_for(std::chrono::seconds(1));
        before = Reconciles();
        return first && before && *first == *before;
      },
      kWait))
      << Log();

  // Where the watches of the writes below start: each list's version before them.
  auto caches_before = client_->ListAll(core::resources::ModelCaches(), "", {});
  ASSERT_TRUE(caches_before) << caches_before.error().ToString();
  auto revisions_before = client_->ListAll(core::resources::ModelRevisions(), namespace_, {});
  ASSERT_TRUE(revisions_before) << revisions_before.error().ToString();
  std::string last_cache_write;
  std::string last_revision_write;
  for (int round = 0; round < 10; ++round) {
    auto written = client_->Patch(
        core::resources::ModelCaches(), "", other_node, core::PatchType::kMerge,
        {{"status", {{"capacityBytes", 1000 + round}, {"peerEndpoint", "127.0.0.9:1"}}}},
        {.subresource = "status"});
    ASSERT_TRUE(written) << written.error().ToString();
    last_cache_write = (*written)["metadata"]["resourceVersion"];
    for (const TestRevision* revision : {&unrelated, &held}) {
      auto labelled = client_->Patch(
          core::resources::ModelRevisions(), namespace_, revision->name, core::PatchType::kMerge,
          {{"metadata", {{"labels", {{"round", std::to_string(round)}}}}}});
      ASSERT_TRUE(labelled) << labelled.error().ToString();
      last_revision_write = (*labelled)["metadata"]["resourceVersion"];
    }
  }
  // The API server has sent every one of those writes to whoever watches them once a watch of
  // the test's own has had the last of each kind.
  EXPECT_TRUE(Delivered(*watcher_, core::resources::ModelCaches(), "",
                        caches_before->resource_version, last_cache_write));
  EXPECT_TRUE(Delivered(*watcher_, core::resources::ModelRevisions(), namespace_,
                        revisions_before->resource_version, last_revision_write));
  // An agent that still watched them would have had them by now too, and woken within
  // milliseconds; proving that it did not takes a window, and a second covers a loaded machine.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const auto after_others = Reconciles();
  ASSERT_TRUE(after_others);
  EXPECT_EQ(*after_others, *before) << "30 writes that are not this node's cache woke its loop";

  const json holdings = {
      {"apiVersion", "modelplane.io/v1alpha1"},
      {"kind", "ModelCache"},
      {"metadata", {{"name", node_}}},
      {"spec",
       {{"holdings",
         json::array({{{"digest", core::FormatDigest(held.digest)}, {"peerInZone", true}}})}}}};
  auto own =
      client_->Patch(core::resources::ModelCaches(), "", node_, core::PatchType::kApply, holdings,
                     {.field_manager = "modelplane-operator-holdings", .force = true});
  ASSERT_TRUE(own) << own.error().ToString();
  EXPECT_TRUE(WaitUntil(
      [&] {
        const auto now = Reconciles();
        return now && *now > *after_others;
      },
      kWait))
      << "a change to its own ModelCache did not wake its loop";
  (void)client_->Delete(core::resources::ModelCaches(), "", other_node);
}

}  // namespace
}  // namespace modelplane::agent
