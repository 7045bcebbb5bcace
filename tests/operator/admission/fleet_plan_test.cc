#include "operator/admission/fleet_plan.h"

#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

namespace api = core::api;

constexpr char kBucket[] = "objectStore/http://s3.local/models";
// NOLINTNEXTLINE(cert-err58-cpp): a test constant; a throw before main ends the test anyway
const std::string kDigest = "sha256:" + std::string(64, 'a');

api::ModelCache Node(const std::string& name, std::string zone, std::string reason = "prestage",
                     std::optional<std::pair<std::string_view, std::int64_t>> held = {}) {
  api::ModelCache cache;
  cache.metadata.name = name;
  cache.spec.revisions.push_back({.revision = {.namespace_name = "models", .name = "llama"},
                                  .digest = kDigest,
                                  .reason = std::move(reason)});
  api::ModelCacheStatus status{.peer_endpoint = name + ":7443", .zone = std::move(zone)};
  if (held) {
    status.revisions.push_back(
        {.digest = kDigest, .state = std::string(held->first), .bytes_done = held->second});
  }
  cache.status = status;
  return cache;
}

FleetPlanInput Input(std::vector<api::ModelCache> caches) {
  FleetPlanInput input;
  for (api::ModelCache& cache : caches) {
    input.caches.push_back(std::make_shared<const api::ModelCache>(std::move(cache)));
  }
  input.revisions["models/llama"] = {.digest = kDigest, .identities = {kBucket}};
  input.wanted_streams = 8;
  return input;
}

TEST(FleetPlanTest, OneSeederPerZoneDemandsTheOriginAndTheOthersFollow) {
  const FleetPlan plan = PlanFleet(
      Input({Node("a-1", "a"), Node("a-2", "a", "prestage", {{api::kCacheStateStaging, 10}}),
             Node("b-1", "b"), Node("b-2", "b")}));
  ASSERT_EQ(plan.seeders.size(), 2u);
  EXPECT_EQ(plan.seeders.at("a|" + kDigest), "a-2") << "the one that holds the most";
  EXPECT_EQ(plan.seeders.at("b|" + kDigest), "b-1");
  ASSERT_EQ(plan.demands.at(kBucket).size(), 2u);
  EXPECT_EQ(plan.followers.at(kBucket), 2);
  // Followers get a 0-stream entry, so their agents wait instead of falling back.
  for (const char* node : {"a-1", "a-2", "b-1", "b-2"}) {
    EXPECT_TRUE(plan.node_sources.at(node).contains(kBucket)) << node;
  }
}

TEST(FleetPlanTest, AZoneThatHoldsTheRevisionReadsNoOrigin) {
  const FleetPlan plan = PlanFleet(
      Input({Node("a-1", "a", "prestage", {{api::kCacheStateReady, 100}}), Node("a-2", "a")}));
  EXPECT_TRUE(plan.seeders.empty());
  EXPECT_FALSE(plan.demands.contains(kBucket));
  EXPECT_EQ(plan.followers.at(kBucket), 1);
}

TEST(FleetPlanTest, ASeederStaysUntilItStallsThenTheFollowerWithMostTakesOver) {
  FleetPlanInput input = Input({Node("a-1", "a", "rollout", {{api::kCacheStateStaging, 50}}),
                                Node("a-2", "a", "rollout", {{api::kCacheStateStaging, 30}}),
                                Node("a-3", "a", "rollout", {{api::kCacheStateStaging, 20}})});
  input.seeders["a|" + kDigest] = "a-3";
  EXPECT_EQ(PlanFleet(input).seeders.at("a|" + kDigest), "a-3") << "no flapping";
  input.stalled.insert("a-3|" + kDigest);
  const FleetPlan plan = PlanFleet(input);
  EXPECT_EQ(plan.seeders.at("a|" + kDigest), "a-1");
  ASSERT_EQ(plan.demands.at(kBucket).size(), 1u);
  EXPECT_EQ(plan.demands.at(kBucket)[0].node, "a-1");
  EXPECT_EQ(plan.demands.at(kBucket)[0].priority, StagingPriority::kRolloutStep);
}

TEST(FleetPlanTest, ADeadSeederDoesNotTakeItsOwnPlaceBackFromFollowersThatWaitedOnIt) {
  // The seeder died holding the most; its followers had nothing yet and waited, so every node
  // of the zone looks stalled.
  FleetPlanInput input = Input({Node("a-1", "a", "rollout", {{api::kCacheStateStaging, 900}}),
                                Node("a-2", "a", "rollout", {{api::kCacheStateStaging, 0}}),
                                Node("a-3", "a", "rollout", {{api::kCacheStateStaging, 0}})});
  input.seeders["a|" + kDigest] = "a-1";
  for (const char* node : {"a-1", "a-2", "a-3"}) input.stalled.insert(node + ("|" + kDigest));
  EXPECT_EQ(PlanFleet(input).seeders.at("a|" + kDigest), "a-2");
}

TEST(FleetPlanTest, ANodeWhoseAgentNeverReportedGetsNoGrantAndSeedsNothing) {
  api::ModelCache silent = Node("b-1", "b");
  silent.status.reset();  // its agent exited at start: the ModelCache has a spec, no status
  const FleetPlan plan = PlanFleet(Input({silent, Node("b-2", "b")}));
  EXPECT_FALSE(plan.node_sources.contains("b-1"));
  ASSERT_EQ(plan.seeders.size(), 1u);
  EXPECT_EQ(plan.seeders.at("b|" + kDigest), "b-2");
  ASSERT_EQ(plan.demands.at(kBucket).size(), 1u);
  EXPECT_EQ(plan.demands.at(kBucket)[0].node, "b-2");
  EXPECT_TRUE(PlanFleet(Input({silent})).demands.empty()) << "alone it still seeds nothing";
}

TEST(FleetPlanTest, RefusedAndReadyEntriesAskForNothing) {
  api::ModelCache refused = Node("a-1", "a");
  refused.status->revisions.push_back(
      {.digest = kDigest,
       .state = std::string(api::kCacheStateFailed),
       .reason = std::string(api::kCacheReasonInsufficientCapacity)});
  const FleetPlan plan = PlanFleet(Input({refused}));
  EXPECT_TRUE(plan.node_sources.empty());
  EXPECT_TRUE(plan.demands.empty());
}

TEST(FleetPlanTest, PrioritiesFollowTheEntryReason) {
  EXPECT_EQ(PriorityOfReason(api::kReasonInUse), StagingPriority::kRolloutStep);
  EXPECT_EQ(PriorityOfReason(api::kReasonRollout), StagingPriority::kRolloutStep);
  EXPECT_EQ(PriorityOfReason(api::kReasonRollback), StagingPriority::kRollbackRefill);
  EXPECT_EQ(PriorityOfReason(api::kReasonPrestage), StagingPriority::kPrestage);
  EXPECT_EQ(PriorityOfReason(""), StagingPriority::kSpeculative);
}

TEST(FleetPlanTest, TheFleetsTelemetryIsSummedOverFreshReports) {
  api::ModelCache one = Node("a-1", "a");
  api::ModelCache two = Node("a-2", "a");
  const api::Timestamp now = api::Timestamp(std::chrono::seconds(1'800'000'000));
  one.status->sources.push_back({.source = kBucket,
                                 .window_end = now,
                                 .bytes_per_second = 100,
                                 .peak_streams = 2,
                                 .requests_ok = 10,
                                 .requests_throttled = 1,
                                 .ttfb_milliseconds = 20});
  two.status->sources.push_back({.source = kBucket,
                                 .window_end = now,
                                 .bytes_per_second = 300,
                                 .peak_streams = 3,
                                 .requests_ok = 30,
                                 .ttfb_milliseconds = 40});
  api::ModelCache stale = Node("a-3", "a");
  stale.status->sources.push_back(
      {.source = kBucket, .window_end = now - std::chrono::minutes(5), .bytes_per_second = 999});
  const SourceObservation observation =
      ObserveSource(Input({one, two, stale}).caches, kBucket, now - std::chrono::seconds(10));
  EXPECT_EQ(observation.bytes_per_second, 400);
  EXPECT_EQ(observation.streams_in_use, 5);
  EXPECT_EQ(observation.requests_ok, 40);
  EXPECT_EQ(observation.throttled, 1);
  EXPECT_NEAR(observation.ttfb_seconds, 0.035, 1e-9);  // weighted by requests
}

}  // namespace
}  // namespace modelplane::controller
