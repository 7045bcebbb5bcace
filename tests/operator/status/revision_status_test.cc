// Status aggregation (operator/status/revision_status.h): counts, phases, percentiles, tiers,
// conditions and their transition times.
#include "operator/status/revision_status.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using std::chrono::seconds;

constexpr api::Timestamp kT0 =
    api::Timestamp(std::chrono::sys_days(std::chrono::year(2026) / 11 / 29).time_since_epoch());
// A function: a static std::string could throw before main.
std::string Digest() {
  return "sha256:" + std::string(64, 'a');
}

DesiredNodeState At(std::string node, std::string_view state, std::string tier = "",
                    std::optional<double> seconds_to_ready = std::nullopt) {
  api::CachedRevision cached{
      .digest = Digest(), .state = std::string(state), .source_tier = std::move(tier)};
  if (seconds_to_ready) {
    cached.timestamps.queued = kT0;
    cached.timestamps.published =
        kT0 + std::chrono::microseconds(static_cast<std::int64_t>(*seconds_to_ready * 1e6));
  }
  return {.node = std::move(node), .cached = cached};
}

RevisionObservation Valid(std::vector<DesiredNodeState> nodes, int requested = 0) {
  RevisionObservation observation{.generation = 3,
                                  .digest = Digest(),
                                  .total_bytes = 1000,
                                  .requested_nodes = requested,
                                  .nodes = std::move(nodes)};
  if (observation.requested_nodes == 0) {
    observation.requested_nodes = static_cast<int>(observation.nodes.size());
  }
  return observation;
}

const api::Condition& Find(const api::ModelRevisionStatus& status, std::string_view type) {
  for (const auto& condition : status.conditions) {
    if (condition.type == type) return condition;
  }
  static const api::Condition missing{.type = "missing"};
  ADD_FAILURE() << "no condition " << type;
  return missing;
}

TEST(RevisionStatusTest, NearestRankPercentiles) {
  EXPECT_EQ(NearestRankPercentile({}, 0.5), 0);
  EXPECT_EQ(NearestRankPercentile({7}, 0.99), 7);
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_EQ(NearestRankPercentile(hundred, 0.50), 50);
  EXPECT_EQ(NearestRankPercentile(hundred, 0.95), 95);
  EXPECT_EQ(NearestRankPercentile(hundred, 0.99), 99);
  EXPECT_EQ(NearestRankPercentile({1, 2, 3}, 0.5), 2);
}

TEST(RevisionStatusTest, AllReadyIsReadyWithPercentilesAndTiers) {
  const auto status =
      BuildRevisionStatus(Valid({At("n2", api::kCacheStateReady, "peer", 2.0),
                                 At("n1", api::kCacheStateReady, "objectStore", 10.0),
                                 At("n3", api::kCacheStateReady, "peer", 4.0)}),
                          {}, kT0);
  EXPECT_EQ(status.phase, api::kPhaseReady);
  EXPECT_EQ(status.observed_generation, 3);
  EXPECT_EQ(status.digest, Digest());
  EXPECT_EQ(status.total_bytes, 1000);
  EXPECT_EQ(status.desired_nodes, 3);
  EXPECT_EQ(status.ready_nodes, 3);
  EXPECT_EQ(status.staging_nodes, 0);
  ASSERT_TRUE(status.bytes_to_ready_seconds);
  EXPECT_EQ(status.bytes_to_ready_seconds,
            (api::LatencyPercentiles{.p50 = 4.0, .p95 = 10.0, .p99 = 10.0}));
  ASSERT_EQ(status.nodes.size(), 3u);
  EXPECT_EQ(status.nodes[0].node, "n1");  // sorted by node
  EXPECT_EQ(status.nodes[0].tier, "objectStore");
  EXPECT_EQ(status.nodes[0].bytes_to_ready_seconds, std::optional<double>(10.0));
  EXPECT_EQ(status.nodes[1].tier, "peer");
  EXPECT_EQ(Find(status, kConditionReady).status, api::kConditionTrue);
  EXPECT_EQ(Find(status, kConditionValid).status, api::kConditionTrue);
  EXPECT_EQ(Find(status, kConditionValid).observed_generation, 3);
}

TEST(RevisionStatusTest, CountsStagingAndPendingAsStaging) {
  const auto status = BuildRevisionStatus(Valid({At("n1", api::kCacheStateReady, "peer", 1.0),
                                                 At("n2", api::kCacheStateStaging),
                                                 At("n3", api::kCacheStatePending),
                                                 {.node = "n4"}}),
                                          {}, kT0);
  EXPECT_EQ(status.phase, api::kPhaseStaging);
  EXPECT_EQ(status.desired_nodes, 4);
  EXPECT_EQ(status.ready_nodes, 1);
  EXPECT_EQ(status.staging_nodes, 2);
  EXPECT_EQ(status.failed_nodes, 0);
  EXPECT_EQ(Find(status, kConditionReady).status, api::kConditionFalse);
  // Percentiles cover only the nodes that became ready.
  ASSERT_TRUE(status.bytes_to_ready_seconds);
  EXPECT_EQ(status.bytes_to_ready_seconds,
            (api::LatencyPercentiles{.p50 = 1.0, .p95 = 1.0, .p99 = 1.0}));
}

TEST(RevisionStatusTest, NothingStartedIsPendingWithoutPercentiles) {
  const auto status = BuildRevisionStatus(Valid({{.node = "n1"}, {.node = "n2"}}), {}, kT0);
  EXPECT_EQ(status.phase, api::kPhasePending);
  EXPECT_FALSE(status.bytes_to_ready_seconds);
}

TEST(RevisionStatusTest, AFailedNodeDegradesWithItsMessage) {
  auto failed = At("n2", api::kCacheStateFailed);
  if (failed.cached) failed.cached->message = "sha256 mismatch on model-00001.safetensors";
  const auto status =
      BuildRevisionStatus(Valid({At("n1", api::kCacheStateReady, "peer", 1.0), failed}), {}, kT0);
  EXPECT_EQ(status.phase, api::kPhaseDegraded);
  EXPECT_EQ(status.failed_nodes, 1);
  EXPECT_NE(Find(status, kConditionReady).message.find("sha256 mismatch"), std::string::npos);
}

TEST(RevisionStatusTest, FewerEligibleNodesThanRequestedIsSaid) {
  auto observation = Valid({At("n1", api::kCacheStateReady, "peer", 1.0)}, 3);
  observation.ineligible_nodes = 2;
  const auto status = BuildRevisionStatus(observation, {}, kT0);
  EXPECT_EQ(status.phase, api::kPhaseReady);
  EXPECT_NE(Find(status, kConditionReady).message.find("3 requested, 2 matching nodes"),
            std::string::npos)
      << Find(status, kConditionReady).message;
}

TEST(RevisionStatusTest, NoNodesIsPendingWithAReason) {
  auto observation = Valid({}, 2);
  observation.ineligible_nodes = 3;
  auto status = BuildRevisionStatus(observation, {}, kT0);
  EXPECT_EQ(status.phase, api::kPhasePending);
  EXPECT_EQ(Find(status, kConditionReady).reason, "NoEligibleNodes");
  observation.requested_nodes = 0;
  status = BuildRevisionStatus(observation, {}, kT0);
  EXPECT_EQ(Find(status, kConditionReady).reason, "NotPrestaged");
}

TEST(RevisionStatusTest, AQuotaCutSaysWhyInWithinQuotaAndReady) {
  auto observation = Valid({At("n1", api::kCacheStateReady, "peer", 1.0)}, 3);
  observation.quota_refusals = std::vector<std::string>{"prestaged on 1 of 3 nodes asked: ..."};
  auto status = BuildRevisionStatus(observation, {}, kT0);
  const api::Condition& within = Find(status, kConditionWithinQuota);
  EXPECT_EQ(within.status, api::kConditionFalse);
  EXPECT_EQ(within.reason, kReasonQuotaExceeded);
  EXPECT_EQ(within.message, "prestaged on 1 of 3 nodes asked: ...");
  EXPECT_NE(Find(status, kConditionReady).message.find("ModelQuota"), std::string::npos)
      << "not blamed on ineligible nodes: " << Find(status, kConditionReady).message;

  // Nothing granted at all: Pending, and Ready says it is the quota, whether the copies asked
  // for were prestaged or only pinned (no prestage asked).
  observation.nodes.clear();
  for (const int requested : {3, 0}) {
    observation.requested_nodes = requested;
    status = BuildRevisionStatus(observation, {}, kT0);
    EXPECT_EQ(status.phase, api::kPhasePending);
    EXPECT_EQ(Find(status, kConditionReady).reason, kReasonQuotaExceeded) << requested;
  }

  observation.quota_refusals = std::vector<std::string>{};
  observation.nodes = {At("n1", api::kCacheStateReady, "peer", 1.0)};
  status = BuildRevisionStatus(observation, {}, kT0);
  EXPECT_EQ(Find(status, kConditionWithinQuota).status, api::kConditionTrue);

  observation.quota_refusals.reset();  // no ModelQuota in its namespace
  status = BuildRevisionStatus(observation, {}, kT0);
  EXPECT_TRUE(
      std::none_of(status.conditions.begin(), status.conditions.end(),
                   [](const api::Condition& c) { return c.type == kConditionWithinQuota; }));
}

TEST(RevisionStatusTest, RevokedWinsOverReadiness) {
  auto observation = Valid({});
  observation.revoked = true;
  const auto status = BuildRevisionStatus(observation, {}, kT0);
  EXPECT_EQ(status.phase, api::kPhaseRevoked);
  EXPECT_EQ(Find(status, kConditionReady).reason, "Revoked");
}

TEST(RevisionStatusTest, RevokedReportsThePurgeUntilNoNodeHoldsIt) {
  auto observation = Valid({});
  observation.revoked = true;
  for (int i = 40; i > 0; --i) {
    observation.held.push_back({.node = "gpu-" + std::to_string(100 + i), .bytes = 10});
  }
  auto status = BuildRevisionStatus(observation, {}, kT0);
  ASSERT_TRUE(status.purge.has_value());
  EXPECT_EQ(status.purge->nodes_holding, 40);
  EXPECT_EQ(status.purge->bytes_held, 400);
  ASSERT_EQ(status.purge->nodes.size(), api::kMaxPurgeNodesListed);  // bounded, sorted
  EXPECT_EQ(status.purge->nodes.front(), "gpu-101");
  EXPECT_EQ(Find(status, kConditionPurged).status, "False");
  EXPECT_EQ(Find(status, kConditionPurged).reason, "Purging");
  EXPECT_NE(Find(status, kConditionPurged).message.find("40 nodes still hold 400 bytes"),
            std::string::npos);

  observation.held.clear();
  status = BuildRevisionStatus(observation, status.conditions, kT0);
  EXPECT_EQ(status.purge->nodes_holding, 0);
  EXPECT_TRUE(status.purge->nodes.empty());
  EXPECT_EQ(Find(status, kConditionPurged).status, "True");

  // Not revoked: no purge in status at all.
  observation.revoked = false;
  status = BuildRevisionStatus(observation, {}, kT0);
  EXPECT_FALSE(status.purge.has_value());
}

TEST(RevisionStatusTest, InvalidListsEveryProblemAndHasNoDigest) {
  RevisionObservation observation{.generation = 1,
                                  .problems = {"spec.files[0].sha256: bad (MalformedDigest)",
                                               "spec.sources: none (NoSources)"}};
  const auto status = BuildRevisionStatus(observation, {}, kT0);
  EXPECT_EQ(status.phase, api::kPhaseInvalid);
  EXPECT_TRUE(status.digest.empty());
  const auto& valid = Find(status, kConditionValid);
  EXPECT_EQ(valid.status, api::kConditionFalse);
  EXPECT_EQ(valid.reason, kReasonInvalidSpec);
  EXPECT_NE(valid.message.find("MalformedDigest"), std::string::npos);
  EXPECT_NE(valid.message.find("NoSources"), std::string::npos);
}

TEST(RevisionStatusTest, TransitionTimeMovesOnlyWhenTheStatusChanges) {
  const auto staging = BuildRevisionStatus(Valid({At("n1", api::kCacheStateStaging)}), {}, kT0);
  // Same Ready=False later: the transition time stays, so the status compares equal.
  const auto again = BuildRevisionStatus(Valid({At("n1", api::kCacheStateStaging)}),
                                         staging.conditions, kT0 + seconds(30));
  EXPECT_EQ(again, staging);
  const auto ready = BuildRevisionStatus(Valid({At("n1", api::kCacheStateReady, "peer", 1.0)}),
                                         staging.conditions, kT0 + seconds(60));
  EXPECT_EQ(Find(ready, kConditionReady).last_transition_time, kT0 + seconds(60));
  EXPECT_EQ(Find(ready, kConditionValid).last_transition_time, kT0);
}

TEST(RevisionStatusTest, ConditionTimesHaveWholeSeconds) {
  const auto status = BuildRevisionStatus(Valid({}), {}, kT0 + std::chrono::milliseconds(1500));
  EXPECT_EQ(Find(status, kConditionValid).last_transition_time, kT0 + seconds(1));
}

}  // namespace
}  // namespace modelplane::controller
