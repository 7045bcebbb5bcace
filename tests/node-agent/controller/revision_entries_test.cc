#include "node-agent/controller/revision_entries.h"

#include <chrono>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

core::Sha256Bytes DigestOf(char fill) {
  core::Sha256Bytes digest{};
  digest.fill(static_cast<std::uint8_t>(fill));
  return digest;
}

RevisionIndex::Entry Loaded(const std::string& name, char fill, std::int64_t bytes = 100) {
  LoadedRevision loaded;
  loaded.revision.metadata.namespace_name = "serving";
  loaded.revision.metadata.name = name;
  loaded.revision.spec.files = {{.path = "a.safetensors", .size = bytes}};
  loaded.digest = DigestOf(fill);
  return {.resource_version = "1", .loaded = loaded};
}

WantedRevision Wanted(const std::string& name, const std::string& reason, bool pinned = false) {
  return {.reference = {.namespace_name = "serving", .name = name},
          .digest_hint = "",
          .reason = reason,
          .pinned = pinned};
}

WantedRevisionFacts Fact(const WantedRevision& wanted, const RevisionIndex::Entry* indexed) {
  return {.wanted = &wanted, .key = "serving/" + wanted.reference.name, .indexed = indexed};
}

RevisionManifest Held(char fill, std::int64_t published = 1'700'000'000) {
  return {.revision_digest = DigestOf(fill),
          .name = "serving/x",
          .files = {{.path = "a.safetensors", .size = 100}},
          .published_unix_seconds = published};
}

TEST(RevisionEntriesTest, ARevisionThatCannotBeReadFailsUnderTheOperatorsDigestOrNotAtAll) {
  WantedRevision hinted = Wanted("gone", "prestage");
  hinted.digest_hint = core::FormatDigest(DigestOf('h'));
  const WantedRevision from_pod = Wanted("also-gone", "in-use");  // a pod names no digest
  RevisionIndex::Entry invalid{.resource_version = "3", .problem = "spec.files: is required"};
  WantedRevision invalid_wanted = Wanted("bad", "rollout");
  invalid_wanted.digest_hint = core::FormatDigest(DigestOf('i'));
  const WantedRevisionsPlan plan = PlanWantedRevisions(
      {Fact(hinted, nullptr), Fact(from_pod, nullptr), Fact(invalid_wanted, &invalid)}, {});
  ASSERT_EQ(plan.entries.size(), 2U);
  const core::api::CachedRevision& gone = plan.entries.at(hinted.digest_hint);
  EXPECT_EQ(gone.state, "Failed");
  EXPECT_EQ(gone.message, "ModelRevision serving/gone not found");
  EXPECT_EQ(plan.entries.at(invalid_wanted.digest_hint).message,
            "ModelRevision serving/bad is invalid: spec.files: is required");
  EXPECT_TRUE(plan.to_stage.empty());
  EXPECT_TRUE(plan.wanted_digests.empty()) << "nothing to keep staging";
}

TEST(RevisionEntriesTest, ARevokedRevisionIsNeverStagedAndItsPodsGoUnready) {
  const RevisionIndex::Entry by_spec = [] {
    RevisionIndex::Entry entry = Loaded("r1", '1');
    entry.loaded->revision.spec.revoked = true;
    return entry;
  }();
  const RevisionIndex::Entry by_digest = Loaded("r2", '2');
  const WantedRevision first = Wanted("r1", "in-use");
  const WantedRevision second = Wanted("r2", "in-use");
  WantedRevisionFacts revoked_digest = Fact(second, &by_digest);
  revoked_digest.digest_revoked = true;
  revoked_digest.manifest = Held('2');  // even while the store still holds it
  const WantedRevisionsPlan plan = PlanWantedRevisions({Fact(first, &by_spec), revoked_digest}, {});
  EXPECT_TRUE(plan.entries.empty());
  EXPECT_TRUE(plan.to_stage.empty());
  EXPECT_TRUE(plan.weights.ready.empty());
  EXPECT_THAT(plan.weights.revoked,
              ElementsAre(Pair("serving/r1", core::FormatDigest(DigestOf('1'))),
                          Pair("serving/r2", core::FormatDigest(DigestOf('2')))));
}

TEST(RevisionEntriesTest, AHeldRevisionIsReadyWithTheOriginOfItsStagingElseOfTheLastStatus) {
  const RevisionIndex::Entry one = Loaded("r1", '1');
  const RevisionIndex::Entry two = Loaded("r2", '2');
  const RevisionIndex::Entry three = Loaded("r3", '3');
  const WantedRevision w1 = Wanted("r1", "prestage", /*pinned=*/true);
  const WantedRevision w2 = Wanted("r2", "prestage");
  const WantedRevision w3 = Wanted("r3", "prestage");
  WantedRevisionFacts staged = Fact(w1, &one);
  staged.manifest = Held('1');
  staged.staged = StagingState{.phase = StagingPhase::kReady,
                               .tier = "peer",
                               .bytes_by_tier = {{"peer", 100}, {"origin", 0}}};
  WantedRevisionFacts restarted = Fact(w2, &two);
  restarted.manifest = Held('2');
  WantedRevisionFacts found_on_disk = Fact(w3, &three);
  found_on_disk.manifest = Held('3', 1'700'000'123);
  const std::string digest_two = core::FormatDigest(DigestOf('2'));
  const std::map<std::string, core::api::CachedRevision> previous = {
      {digest_two, {.digest = digest_two, .state = "Ready", .source_tier = "origin"}}};

  for (WantedRevisionFacts* fact : {&staged, &restarted, &found_on_disk}) {
    fact->sources_proven = true;
  }
  const WantedRevisionsPlan plan =
      PlanWantedRevisions({staged, restarted, found_on_disk}, previous);
  const auto& entry_one = plan.entries.at(core::FormatDigest(DigestOf('1')));
  EXPECT_EQ(entry_one.state, "Ready");
  EXPECT_EQ(entry_one.bytes_done, 100);
  EXPECT_EQ(entry_one.source_tier, "peer");
  EXPECT_THAT(entry_one.bytes_by_tier, ElementsAre(Pair("peer", 100)))
      << "empty tiers are left out";
  EXPECT_EQ(plan.entries.at(digest_two).source_tier, "origin");
  const auto& entry_three = plan.entries.at(core::FormatDigest(DigestOf('3')));
  EXPECT_EQ(entry_three.source_tier, "local");
  ASSERT_TRUE(entry_three.timestamps.published);
  EXPECT_EQ(entry_three.timestamps.published->time_since_epoch(),
            std::chrono::seconds(1'700'000'123));
  EXPECT_EQ(plan.weights.ready.size(), 3U);
  EXPECT_TRUE(plan.to_stage.empty());
  EXPECT_EQ(plan.wanted_digests.size(), 3U);
  EXPECT_TRUE(plan.wanted_pins.at(DigestOf('1')));
  EXPECT_FALSE(plan.wanted_pins.at(DigestOf('2')));
}

// Two namespaces' revisions with the same files share a digest: bytes held for one serve the
// other only once its own sources were shown to serve them.
TEST(RevisionEntriesTest, HeldBytesServeARevisionOnlyOnceItsOwnSourcesAreProven) {
  const RevisionIndex::Entry original = Loaded("original", '1');
  const RevisionIndex::Entry copy = Loaded("copy", '1');
  const WantedRevision wanted_original = Wanted("original", "prestage");
  WantedRevision wanted_copy = Wanted("copy", "in-use");
  wanted_copy.reference.namespace_name = "other";
  WantedRevisionFacts proven = Fact(wanted_original, &original);
  proven.manifest = Held('1');
  proven.sources_proven = true;
  proven.proof = core::api::SourceProof{.revision = wanted_original.reference, .state = "Proven"};
  WantedRevisionFacts unproven = Fact(wanted_copy, &copy);
  unproven.key = "other/copy";
  unproven.manifest = Held('1');
  unproven.proof = core::api::SourceProof{.revision = wanted_copy.reference,
                                          .state = "Failed",
                                          .reason = "PossessionNotProven",
                                          .message = "not served"};

  const WantedRevisionsPlan plan = PlanWantedRevisions({proven, unproven}, {});
  const auto& entry = plan.entries.at(core::FormatDigest(DigestOf('1')));
  EXPECT_EQ(entry.state, "Ready") << "the digest itself is held, verified";
  ASSERT_EQ(entry.source_proofs.size(), 2U);
  EXPECT_EQ(entry.source_proofs[0].revision.name, "original");
  EXPECT_EQ(entry.source_proofs[1].reason, "PossessionNotProven");
  EXPECT_THAT(plan.weights.ready, ElementsAre(Pair("serving/original", entry.digest)));
  EXPECT_THAT(plan.weights.unverified, ElementsAre(Pair("other/copy", entry.digest)));
  ASSERT_EQ(plan.to_prove.size(), 1U);
  EXPECT_EQ(plan.to_prove[0].key, "other/copy");
  EXPECT_TRUE(plan.to_stage.empty()) << "nothing is fetched again";
}

TEST(RevisionEntriesTest, OnlyAStagingThatReadEveryByteFromItsOwnSourcesProvesThem) {
  const auto staged = [](std::map<std::string, std::uint64_t> tiers) {
    return StagingState{.phase = StagingPhase::kReady, .bytes_by_tier = std::move(tiers)};
  };
  EXPECT_TRUE(StagedFromOwnSources(staged({{"objectStore", 10}, {"http", 5}})));
  EXPECT_TRUE(StagedFromOwnSources(staged({{"sharedFilesystem", 10}, {"peer", 0}})));
  EXPECT_TRUE(StagedFromOwnSources(staged({{"hub", 10}})));
  EXPECT_FALSE(StagedFromOwnSources(staged({{"objectStore", 10}, {"peer", 1}})));
  EXPECT_FALSE(StagedFromOwnSources(staged({{"objectStore", 10}, {"local", 1}})))
      << "what the node already held may have come for another namespace";
  StagingState running = staged({{"objectStore", 10}});
  running.phase = StagingPhase::kStaging;
  EXPECT_FALSE(StagedFromOwnSources(running));
}

TEST(RevisionEntriesTest, WhatIsNotHeldIsStagedAPodsFirstAPrestageLast) {
  const RevisionIndex::Entry one = Loaded("r1", '1');
  const RevisionIndex::Entry two = Loaded("r2", '2');
  const RevisionIndex::Entry three = Loaded("r3", '3');
  const WantedRevision prestage = Wanted("r1", "prestage");
  const WantedRevision rollout = Wanted("r2", "rollout");
  const WantedRevision in_use = Wanted("r3", "in-use");
  const WantedRevisionsPlan plan =
      PlanWantedRevisions({Fact(prestage, &one), Fact(rollout, &two), Fact(in_use, &three)}, {});
  ASSERT_EQ(plan.to_stage.size(), 3U);
  EXPECT_EQ(plan.to_stage[0].key, "serving/r3");
  EXPECT_EQ(plan.to_stage[1].key, "serving/r2");
  EXPECT_EQ(plan.to_stage[2].key, "serving/r1");
  EXPECT_EQ(plan.to_stage[0].loaded, &*three.loaded);
  EXPECT_EQ(plan.weights.unverified.size(), 3U);
  const auto& pending = plan.entries.at(core::FormatDigest(DigestOf('1')));
  EXPECT_EQ(pending.state, "Pending");
  EXPECT_EQ(pending.bytes_total, 100);
  EXPECT_EQ(pending.bytes_done, 0);
}

TEST(RevisionEntriesTest, GoodputAndExpectedFinishAreShownOnlyWhileStaging) {
  StagingState state{.phase = StagingPhase::kStaging,
                     .bytes_done = 40,
                     .tier = "origin",
                     .goodput_bytes_per_second = 1.5e6,
                     .expected_finish = std::chrono::seconds(90)};
  core::api::CachedRevision entry;
  ApplyStagingState(state, entry);
  EXPECT_EQ(entry.state, "Staging");
  EXPECT_EQ(entry.bytes_done, 40);
  EXPECT_EQ(entry.goodput_bytes_per_second, 1'500'000);
  EXPECT_EQ(entry.expected_finish_seconds, 90);
  state.phase = StagingPhase::kFailed;
  state.reason = "SourceTooSlow";
  core::api::CachedRevision failed;
  ApplyStagingState(state, failed);
  EXPECT_EQ(failed.state, "Failed");
  EXPECT_EQ(failed.reason, "SourceTooSlow");
  EXPECT_FALSE(failed.goodput_bytes_per_second);
  EXPECT_FALSE(failed.expected_finish_seconds);
}

TEST(RevisionEntriesTest, TheRestOfTheStoreIsReadyInventoryAndWantedEntriesStay) {
  const std::string digest_one = core::FormatDigest(DigestOf('1'));
  const std::string digest_two = core::FormatDigest(DigestOf('2'));
  std::map<std::string, core::api::CachedRevision> entries = {
      {digest_one, {.digest = digest_one, .state = "Staging"}}};
  const std::map<std::string, core::api::CachedRevision> previous = {
      {digest_two, {.digest = digest_two, .state = "Ready", .source_tier = "peer"}}};
  AddStoreInventory({Held('1'), Held('2'), Held('3')}, previous, entries);
  EXPECT_EQ(entries.at(digest_one).state, "Staging");
  EXPECT_EQ(entries.at(digest_two).state, "Ready");
  EXPECT_EQ(entries.at(digest_two).source_tier, "peer");
  const auto& third = entries.at(core::FormatDigest(DigestOf('3')));
  EXPECT_EQ(third.source_tier, "local");
  EXPECT_EQ(third.bytes_done, 100);
  EXPECT_EQ(third.bytes_total, 100);
}

TEST(RevisionEntriesTest, RetentionsSummaryMarksEvictionsAndRevokedRemnantsAndNamesWhatFinished) {
  const std::string held = core::FormatDigest(DigestOf('1'));
  const std::string remnant = core::FormatDigest(DigestOf('2'));
  std::map<std::string, core::api::CachedRevision> entries = {
      {held, {.digest = held, .state = "Ready", .bytes_done = 100, .source_tier = "peer"}}};
  RetentionSummary summary;
  summary.accounts[DigestOf('1')] = {.unique_bytes = 60,
                                     .protection = {"inUse"},
                                     .evicting_reason = "HighWatermark",
                                     .message = "over the high watermark"};
  summary.accounts[DigestOf('2')] = {.evicting_reason = "Revoked", .bytes_held = 7};
  summary.accounts[DigestOf('3')] = {.unique_bytes = 5};  // neither listed nor evicting
  summary.finished = {{.digest = DigestOf('4'),
                       .name = "serving/r4",
                       .reason = "revoked",
                       .bytes_freed = 9,
                       .evicted = true},
                      {.digest = DigestOf('5'), .reason = "high-watermark", .evicted = false}};
  const RevisionIndex index;
  const RetentionOutcome outcome = FoldRetentionSummary(summary, index, entries);
  EXPECT_TRUE(outcome.evicting);
  ASSERT_EQ(entries.size(), 2U) << "a revision neither listed nor evicting is not reported";
  EXPECT_EQ(entries.at(held).state, "Evicting");
  EXPECT_EQ(entries.at(held).reason, "HighWatermark");
  EXPECT_EQ(entries.at(held).unique_bytes, 60);
  EXPECT_EQ(entries.at(held).source_tier, "peer") << "an eviction keeps where the bytes came from";
  EXPECT_EQ(entries.at(remnant).state, "Evicting");
  EXPECT_EQ(entries.at(remnant).bytes_done, 7) << "a revoked remnant shows what is left";
  EXPECT_TRUE(entries.at(remnant).source_tier.empty());
  ASSERT_EQ(outcome.events.size(), 1U) << "only finished evictions are named";
  EXPECT_EQ(outcome.events[0].reason, "Purged");
  EXPECT_EQ(outcome.events[0].note, "purged revoked serving/r4 (" +
                                        core::FormatDigest(DigestOf('4')) +
                                        "): 9 bytes freed (revoked)");
}

TEST(RevisionEntriesTest, AQuietRetentionPassChangesNothingButTheAccounts) {
  const std::string held = core::FormatDigest(DigestOf('1'));
  std::map<std::string, core::api::CachedRevision> entries = {
      {held, {.digest = held, .state = "Ready"}}};
  RetentionSummary summary;
  summary.accounts[DigestOf('1')] = {.unique_bytes = 60, .protection = {"pinned"}};
  const RevisionIndex index;
  const RetentionOutcome outcome = FoldRetentionSummary(summary, index, entries);
  EXPECT_FALSE(outcome.evicting);
  EXPECT_TRUE(outcome.events.empty());
  EXPECT_EQ(entries.at(held).state, "Ready");
  EXPECT_EQ(entries.at(held).protection, std::vector<std::string>{"pinned"});
}

}  // namespace
}  // namespace modelplane::agent
