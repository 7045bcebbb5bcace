// Scoring and filtering, rule by rule and combined: pure functions over inventory entries.
#include "scheduler-extender/placement.h"

#include <gtest/gtest.h>

#include "core/api/model_cache.h"
#include "scheduler-extender/cache_locality_rule.h"
#include "scheduler-extender/cache_room_rule.h"

namespace modelplane::extender {
namespace {

constexpr std::int64_t kPlacementGiB = std::int64_t{1} << 30;
constexpr const char* kPlacementDigest =
    "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
constexpr const char* kOtherDigest =
    "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

RevisionInfo Revision(std::int64_t bytes = 100 * kPlacementGiB) {
  return {.key = "models/llama-r1", .digest = kPlacementDigest, .bytes = bytes};
}

std::shared_ptr<const NodeCacheInfo> Cache(std::string node, std::int64_t capacity,
                                           std::int64_t used, std::int64_t reserved,
                                           std::vector<CachedDigest> entries = {}) {
  return std::make_shared<const NodeCacheInfo>(NodeCacheInfo{.node = std::move(node),
                                                             .has_status = true,
                                                             .capacity_bytes = capacity,
                                                             .used_bytes = used,
                                                             .reserved_bytes = reserved,
                                                             .entries = std::move(entries)});
}

CachedRevisionInfo Held(std::string_view state, std::int64_t done, std::int64_t total) {
  return {.state = std::string(state), .bytes_done = done, .bytes_total = total};
}

std::int64_t LocalityScore(const RevisionInfo& revision, const NodeCacheInfo* cache) {
  // -1: the rule gave no score, which no expectation below accepts.
  return CacheLocalityRule()
      .Score({.revision = revision, .node = "n", .cache = cache})
      .value_or(-1);
}

TEST(CacheLocalityRuleTest, ReadyScoresHighestStagingInProportionAbsentLowest) {
  const RevisionInfo revision = Revision();
  const std::int64_t total = 100 * kPlacementGiB;
  auto score = [&](CachedRevisionInfo held) {
    auto cache = Cache("n", 0, 0, 0, {{kPlacementDigest, held}});
    return LocalityScore(revision, cache.get());
  };
  EXPECT_EQ(score(Held(core::api::kCacheStateReady, total, total)), 10);
  EXPECT_EQ(score(Held(core::api::kCacheStateStaging, 0, total)), 1);
  EXPECT_EQ(score(Held(core::api::kCacheStateStaging, total / 8, total)), 2);
  EXPECT_EQ(score(Held(core::api::kCacheStateStaging, total / 2, total)), 5);
  EXPECT_EQ(score(Held(core::api::kCacheStateStaging, total - 1, total)), 8);  // never rounds up
  EXPECT_EQ(score(Held(core::api::kCacheStateStaging, total, total)), 9);      // verifying
  EXPECT_EQ(score(Held(core::api::kCacheStateStaging, 2 * total, total)), 9);  // clamped
  EXPECT_EQ(score(Held(core::api::kCacheStateStaging, -5, total)), 1);
  EXPECT_EQ(score(Held(core::api::kCacheStateStaging, 10, 0)), 1);  // total not known yet
  EXPECT_EQ(score(Held(core::api::kCacheStatePending, 0, 0)), 1);   // queued
  EXPECT_EQ(score(Held(core::api::kCacheStateEvicting, total, total)), 0);
  EXPECT_EQ(score(Held(core::api::kCacheStateFailed, total / 2, total)), 0);
  EXPECT_EQ(score(Held("SomethingNew", total, total)), 0);

  // Another digest on the node, or no ModelCache at all, is "absent".
  auto other = Cache("n", 0, 0, 0, {{kOtherDigest, Held(core::api::kCacheStateReady, 1, 1)}});
  EXPECT_EQ(LocalityScore(revision, other.get()), 0);
  EXPECT_EQ(LocalityScore(revision, nullptr), 0);
}

TEST(CacheLocalityRuleTest, HugeRevisionsDoNotOverflow) {
  const std::int64_t total = std::int64_t{1} << 62;
  auto cache =
      Cache("n", 0, 0, 0,
            {{kPlacementDigest, Held(core::api::kCacheStateStaging, total / 4 * 3, total)}});
  EXPECT_EQ(LocalityScore(Revision(total), cache.get()), 7);
}

TEST(CacheLocalityRuleTest, RevisionWithoutDigestMatchesNothing) {
  RevisionInfo revision = Revision();
  revision.digest.clear();
  auto cache = Cache("n", 0, 0, 0, {{"", Held(core::api::kCacheStateReady, 1, 1)}});
  EXPECT_EQ(LocalityScore(revision, cache.get()), 0);
}

TEST(CacheRoomRuleTest, FiltersNodesThatCannotFitTheRevision) {
  const core::ManualClock clock;
  const CacheRoomRule rule(clock);
  const RevisionInfo revision = Revision(100 * kPlacementGiB);
  auto filter = [&](const std::shared_ptr<const NodeCacheInfo>& cache) {
    return rule.Filter({.revision = revision, .node = "n", .cache = cache.get()});
  };
  // Exactly enough room passes; a byte less fails with a reason naming both numbers.
  EXPECT_FALSE(filter(Cache("n", 500 * kPlacementGiB, 300 * kPlacementGiB, 100 * kPlacementGiB)));
  const std::string reason =
      filter(Cache("n", 500 * kPlacementGiB, 300 * kPlacementGiB, 100 * kPlacementGiB + 1))
          .value_or("passed");
  EXPECT_NE(reason.find("models/llama-r1"), std::string::npos) << reason;
  EXPECT_NE(reason.find(std::to_string(100 * kPlacementGiB)), std::string::npos) << reason;
  // Over-committed caches report no negative free space.
  const std::string full =
      filter(Cache("n", 100 * kPlacementGiB, 200 * kPlacementGiB, 0)).value_or("passed");
  EXPECT_NE(full.find("has 0 bytes free"), std::string::npos) << full;
  // Unknown capacity passes: no ModelCache, no status yet, or no capacity reported.
  EXPECT_FALSE(filter(nullptr));
  EXPECT_FALSE(filter(std::make_shared<const NodeCacheInfo>(NodeCacheInfo{.node = "n"})));
  EXPECT_FALSE(filter(Cache("n", 0, 50 * kPlacementGiB, 0)));
  // Already held Ready or Staging: its bytes are counted already.
  EXPECT_FALSE(filter(Cache("n", 100 * kPlacementGiB, 100 * kPlacementGiB, 0,
                            {{kPlacementDigest, Held(core::api::kCacheStateReady, 1, 1)}})));
  EXPECT_FALSE(filter(Cache("n", 100 * kPlacementGiB, 60 * kPlacementGiB, 40 * kPlacementGiB,
                            {{kPlacementDigest, Held(core::api::kCacheStateStaging, 1, 2)}})));
  // Held but Failed or Evicting: needs the room again.
  EXPECT_TRUE(filter(Cache("n", 100 * kPlacementGiB, 100 * kPlacementGiB, 0,
                           {{kPlacementDigest, Held(core::api::kCacheStateFailed, 0, 1)}})));
  EXPECT_TRUE(filter(Cache("n", 100 * kPlacementGiB, 100 * kPlacementGiB, 0,
                           {{kPlacementDigest, Held(core::api::kCacheStateEvicting, 1, 1)}})));
}

TEST(PlacementTest, DefaultPlacementScoresAndFiltersEveryCandidateInOrder) {
  const RevisionInfo revision = Revision(100 * kPlacementGiB);
  const std::vector<std::string> nodes = {"ready", "half", "absent", "full", "unknown"};
  const std::vector<std::shared_ptr<const NodeCacheInfo>> caches = {
      Cache("ready", 1000 * kPlacementGiB, 900 * kPlacementGiB, 0,
            {{kPlacementDigest,
              Held(core::api::kCacheStateReady, 100 * kPlacementGiB, 100 * kPlacementGiB)}}),
      Cache("half", 1000 * kPlacementGiB, 50 * kPlacementGiB, 50 * kPlacementGiB,
            {{kPlacementDigest,
              Held(core::api::kCacheStateStaging, 50 * kPlacementGiB, 100 * kPlacementGiB)}}),
      Cache("absent", 1000 * kPlacementGiB, 0, 0),
      Cache("full", 1000 * kPlacementGiB, 950 * kPlacementGiB, 0), nullptr};
  const core::ManualClock clock;
  const auto verdicts = Placement::Default(clock).Evaluate(revision, nodes, caches);
  ASSERT_EQ(verdicts.size(), nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(verdicts[i].node, nodes[i]);
  // Locality and room averaged: ready 10 and 10; half staged 5 and 10 (its bytes are counted);
  // absent 0 and 10; unknown capacity: locality 0, room abstains.
  EXPECT_EQ(verdicts[0].score, 10);
  EXPECT_EQ(verdicts[1].score, 8);
  EXPECT_EQ(verdicts[2].score, 5);
  EXPECT_EQ(verdicts[4].score, 0);
  EXPECT_TRUE(verdicts[0].passed && verdicts[1].passed && verdicts[2].passed && verdicts[4].passed);
  EXPECT_FALSE(verdicts[3].passed);
  EXPECT_FALSE(verdicts[3].reason.empty());
  EXPECT_TRUE(verdicts[0].reason.empty());
}

TEST(PlacementTest, RevokedRevisionsArePlacedNowhere) {
  RevisionInfo revision = Revision(100 * kPlacementGiB);
  revision.revoked = true;
  const std::vector<std::string> nodes = {"ready", "none"};
  const std::vector<std::shared_ptr<const NodeCacheInfo>> caches = {
      Cache("ready", 1000 * kPlacementGiB, 0, 0,
            {{kPlacementDigest,
              Held(core::api::kCacheStateReady, 100 * kPlacementGiB, 100 * kPlacementGiB)}}),
      nullptr};
  const core::ManualClock clock;
  const auto verdicts = Placement::Default(clock).Evaluate(revision, nodes, caches);
  for (const NodeVerdict& verdict : verdicts) {
    EXPECT_FALSE(verdict.passed) << verdict.node;
    EXPECT_EQ(verdict.reason, "modelplane: revision models/llama-r1 is revoked");
  }
  EXPECT_EQ(verdicts[0].score, 10);  // the filter decides; scores stay what locality says
}

// A rule with fixed answers, to check how Placement combines rules.
class FixedRule final : public PlacementRule {
 public:
  FixedRule(std::optional<std::int64_t> score, std::optional<std::string> reason)
      : score_(score), reason_(std::move(reason)) {}
  std::string_view Name() const override { return "fixed"; }
  RuleVerdict Judge(const NodeContext&) const override {
    return {.reason = reason_, .score = score_};
  }

 private:
  std::optional<std::int64_t> score_;
  std::optional<std::string> reason_;
};

std::vector<WeightedRule> Rules(
    const std::vector<
        std::tuple<std::int64_t, std::optional<std::int64_t>, std::optional<std::string>>>& specs) {
  std::vector<WeightedRule> rules;
  rules.reserve(specs.size());
  for (const auto& [weight, score, reason] : specs) {
    rules.push_back({.rule = std::make_unique<FixedRule>(score, reason), .weight = weight});
  }
  return rules;
}

NodeVerdict EvaluateOne(const Placement& placement) {
  const std::vector<std::string> nodes = {"n"};
  const std::vector<std::shared_ptr<const NodeCacheInfo>> caches = {nullptr};
  return placement.Evaluate(Revision(), nodes, caches).at(0);
}

TEST(PlacementTest, CombinesRulesByWeightedMeanAndJoinsReasons) {
  // (3*10 + 1*0) / 4 = 7.5 -> 8
  EXPECT_EQ(EvaluateOne(Placement(Rules({{3, 10, std::nullopt}, {1, 0, std::nullopt}}))).score, 8);
  // (1*10 + 2*1) / 3 = 4
  EXPECT_EQ(EvaluateOne(Placement(Rules({{1, 10, std::nullopt}, {2, 1, std::nullopt}}))).score, 4);
  // Out-of-range rule scores are clamped before they are combined.
  EXPECT_EQ(EvaluateOne(Placement(Rules({{1, 99, std::nullopt}, {1, -99, std::nullopt}}))).score,
            5);
  // Rules with no weight are dropped; no rules at all score 0 and pass.
  EXPECT_EQ(EvaluateOne(Placement(Rules({{0, 10, "never"}}))).score, 0);
  EXPECT_TRUE(EvaluateOne(Placement(Rules({{0, 10, "never"}}))).passed);

  // A rule without an opinion on the score does not dilute the others.
  EXPECT_EQ(
      EvaluateOne(Placement(Rules({{1, 10, std::nullopt}, {5, std::nullopt, std::nullopt}}))).score,
      10);

  const NodeVerdict failed =
      EvaluateOne(Placement(Rules({{1, 10, "first"}, {1, 10, std::nullopt}, {1, 0, "third"}})));
  EXPECT_FALSE(failed.passed);
  EXPECT_EQ(failed.reason, "first; third");
}

}  // namespace
}  // namespace modelplane::extender

namespace modelplane::extender {
namespace {

TEST(CacheLocalityRuleTest, FilesHeldThroughAnotherRevisionScoreAndNeedNoRoom) {
  const RevisionInfo revision = Revision(100 * kPlacementGiB);
  const auto cache = Cache("n", 200 * kPlacementGiB, 150 * kPlacementGiB, 0);
  const CacheLocalityRule rule;
  const core::ManualClock clock;
  const CacheRoomRule room(clock);
  // 50 GiB free cannot fit 100 GiB, but the node holds 60 GiB of its files already.
  EXPECT_TRUE(room.Filter({.revision = revision, .node = "n", .cache = cache.get()}));
  EXPECT_FALSE(room.Filter(
      {.revision = revision, .node = "n", .cache = cache.get(), .held_bytes = 60 * kPlacementGiB}));
  EXPECT_EQ(*rule.Score({.revision = revision,
                         .node = "n",
                         .cache = cache.get(),
                         .held_bytes = 60 * kPlacementGiB}),
            1 + 4);
  EXPECT_EQ(*rule.Score({.revision = revision,
                         .node = "n",
                         .cache = cache.get(),
                         .held_bytes = 100 * kPlacementGiB}),
            9)
      << "every file held, the revision itself not yet published: below Ready";
}

// A 100 GiB cache with its high watermark at 80 GiB, 70 GiB used, and two unprotected Ready
// revisions it could evict: one never used here (20 GiB), one a pod used `used_ago` ago (30 GiB).
std::shared_ptr<const NodeCacheInfo> CacheWithVictims(const core::Clock& clock,
                                                      std::chrono::seconds used_ago) {
  NodeCacheInfo info{.node = "n",
                     .has_status = true,
                     .capacity_bytes = 100 * kPlacementGiB,
                     .used_bytes = 70 * kPlacementGiB,
                     .high_watermark_bytes = 80 * kPlacementGiB,
                     .reclaimable_bytes = 50 * kPlacementGiB};
  info.evictable = {{.unique_bytes = 20 * kPlacementGiB},
                    {.unique_bytes = 30 * kPlacementGiB,
                     .last_used = std::chrono::time_point_cast<std::chrono::microseconds>(
                         clock.WallNow() - used_ago)}};
  return std::make_shared<const NodeCacheInfo>(std::move(info));
}

TEST(CacheRoomRuleTest, PrefersNodesWhereNothingHotIsEvicted) {
  const core::ManualClock clock;
  const CacheRoomRule rule(clock, std::chrono::hours(1));
  const auto score = [&](std::int64_t bytes, const std::shared_ptr<const NodeCacheInfo>& cache) {
    return rule.Score({.revision = Revision(bytes), .node = "n", .cache = cache.get()})
        .value_or(-1);
  };
  const auto recently_used = CacheWithVictims(clock, std::chrono::minutes(5));
  const auto long_unused = CacheWithVictims(clock, std::chrono::hours(3));
  // Below the high watermark: nothing is evicted.
  EXPECT_EQ(score(10 * kPlacementGiB, recently_used), 10);
  // 25 GiB: 15 over the watermark, the never-used revision (20) covers it; 35 of 50 kept.
  EXPECT_EQ(score(25 * kPlacementGiB, recently_used), 2 + 4);
  // 40 GiB: 30 over, the used revision goes too: hot within the hour, cold after three.
  EXPECT_EQ(score(40 * kPlacementGiB, recently_used), 1);
  EXPECT_EQ(score(40 * kPlacementGiB, long_unused), 2 + 2);
  // Fits only with everything evicted and still not below the watermark: as bad as hot.
  EXPECT_EQ(score(79 * kPlacementGiB, long_unused), 1);
  // Unknown capacity: no opinion.
  EXPECT_EQ(score(10 * kPlacementGiB, nullptr), -1);
}

TEST(CacheRoomRuleTest, WhatTheAgentCouldEvictCountsAsRoom) {
  const core::ManualClock clock;
  const CacheRoomRule rule(clock);
  const auto cache = CacheWithVictims(clock, std::chrono::hours(3));
  const auto filter = [&](std::int64_t bytes) {
    return rule.Filter({.revision = Revision(bytes), .node = "n", .cache = cache.get()});
  };
  // 30 GiB free plus 50 reclaimable: 80 fit, a byte more does not.
  EXPECT_FALSE(filter(80 * kPlacementGiB));
  const std::string reason = filter(80 * kPlacementGiB + 1).value_or("passed");
  EXPECT_NE(reason.find("and " + std::to_string(50 * kPlacementGiB) + " it could evict"),
            std::string::npos)
      << reason;
}

TEST(CacheInventoryTest, EvictableRevisionsAreTheUnprotectedReadyOnesColdestFirst) {
  core::api::ModelCache cache;
  cache.metadata.name = "n";
  cache.status = core::api::ModelCacheStatus{
      .capacity_bytes = 100, .high_watermark_bytes = 80, .reclaimable_bytes = 30};
  const auto at = [](int seconds) {
    return core::api::Timestamp(std::chrono::seconds(1'700'000'000 + seconds));
  };
  auto entry = [](std::string digest, std::string_view state, std::int64_t unique,
                  std::optional<core::api::Timestamp> last_used,
                  std::vector<std::string> protection = {}) {
    core::api::CachedRevision revision;
    revision.digest = std::move(digest);
    revision.state = std::string(state);
    revision.unique_bytes = unique;
    revision.last_used = last_used;
    revision.protection = std::move(protection);
    return revision;
  };
  cache.status->revisions = {entry("sha256:a", core::api::kCacheStateReady, 10, at(20)),
                             entry("sha256:b", core::api::kCacheStateReady, 5, std::nullopt),
                             entry("sha256:c", core::api::kCacheStateReady, 15, at(10)),
                             entry("sha256:d", core::api::kCacheStateReady, 40, at(5),
                                   {std::string(core::api::kProtectionPinned)}),
                             entry("sha256:e", core::api::kCacheStateStaging, 7, std::nullopt)};
  const NodeCacheInfo info = MakeNodeCacheInfo(cache);
  EXPECT_EQ(info.high_watermark_bytes, 80);
  EXPECT_EQ(info.reclaimable_bytes, 30);
  ASSERT_EQ(info.evictable.size(), 3U);
  EXPECT_EQ(info.evictable[0].unique_bytes, 5);   // never used
  EXPECT_EQ(info.evictable[1].unique_bytes, 15);  // used at 10
  EXPECT_EQ(info.evictable[2].unique_bytes, 10);  // used at 20
}

}  // namespace
}  // namespace modelplane::extender
