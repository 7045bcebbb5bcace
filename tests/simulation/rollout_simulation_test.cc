#include "simulation/rollout_simulation.h"

#include <gtest/gtest.h>

namespace modelplane::simulation {
namespace {

constexpr double kGigabyte = 1e9;

// An origin fast enough per stream that the first budget (4 streams) fills a 10 Gb/s NIC.
OriginModel FastOrigin() {
  return {.bytes_per_second = 100 * kGigabit, .stream_bytes_per_second = 10 * kGigabit};
}

RolloutScenario Fleet(int nodes, int zones, double model_bytes, double file_bytes) {
  RolloutScenario scenario;
  scenario.nodes = UniformFleet(nodes, zones, 10 * kGigabit, 100 * kGigabit);
  scenario.file_sizes =
      ShardedModel(static_cast<std::uint64_t>(model_bytes), static_cast<std::uint64_t>(file_bytes));
  scenario.origins = {FastOrigin()};
  scenario.time_limit_seconds = 600;
  return scenario;
}

TEST(RolloutSimulationTest, OneNodeTakesItsLowerBound) {
  const RolloutScenario scenario = Fleet(1, 1, 10 * kGigabyte, 2 * kGigabyte);
  const RolloutOutcome outcome = Simulate(scenario);
  ASSERT_TRUE(outcome.complete);
  const double bound = LowerBoundSeconds(scenario, scenario.nodes.front());
  EXPECT_DOUBLE_EQ(bound, 8.0);
  EXPECT_GE(StagingQuantile(outcome, 1.0), bound);
  EXPECT_LE(StagingQuantile(outcome, 1.0), bound * 1.05);
  EXPECT_NEAR(OriginCopiesPerZone(outcome), 1.0, 1e-6);
}

TEST(RolloutSimulationTest, EachZoneReadsTheOriginOnceAndEveryNodeGetsEveryByte) {
  const RolloutOutcome outcome = Simulate(Fleet(40, 2, 4 * kGigabyte, 1 * kGigabyte));
  ASSERT_TRUE(outcome.complete);
  ASSERT_EQ(outcome.nodes.size(), 40u);
  EXPECT_EQ(outcome.origin_bytes_by_zone.size(), 2u);
  EXPECT_NEAR(OriginCopiesPerZone(outcome), 1.0, 0.01);
  for (const NodeOutcome& node : outcome.nodes) {
    EXPECT_NEAR(node.origin_bytes + node.peer_bytes, outcome.model_bytes, 1e3) << node.name;
  }
  // The zones' other nodes read from peers, which serve whole verified files only.
  EXPECT_GT(outcome.peak_peer_upload_bytes_per_second, 0);
  EXPECT_LE(outcome.peak_peer_clients, ControlModel{}.peer_server_streams);
}

TEST(RolloutSimulationTest, WithoutAdmissionEveryNodeReadsTheOriginUntilPeersHaveFiles) {
  RolloutScenario scenario = Fleet(40, 2, 4 * kGigabyte, 1 * kGigabyte);
  scenario.control.admission = false;
  const RolloutOutcome outcome = Simulate(scenario);
  ASSERT_TRUE(outcome.complete);
  EXPECT_GT(OriginCopiesPerZone(outcome), 5.0);
}

TEST(RolloutSimulationTest, AZoneThatHoldsTheRevisionReadsNothingFromTheOrigin) {
  RolloutScenario scenario = Fleet(10, 1, 4 * kGigabyte, 1 * kGigabyte);
  scenario.nodes.front().holds_ready = true;
  scenario.nodes.front().stages = false;
  const RolloutOutcome outcome = Simulate(scenario);
  ASSERT_TRUE(outcome.complete);
  EXPECT_EQ(outcome.nodes.size(), 9u);
  EXPECT_EQ(OriginCopiesPerZone(outcome), 0.0);
}

TEST(RolloutSimulationTest, TheOriginsCapSetsTheSeedersPace) {
  RolloutScenario scenario = Fleet(1, 1, 4 * kGigabyte, 1 * kGigabyte);
  scenario.origins.front().bytes_per_second = 0.5 * kGigabyte;
  const RolloutOutcome outcome = Simulate(scenario);
  ASSERT_TRUE(outcome.complete);
  EXPECT_NEAR(StagingQuantile(outcome, 0.5), 8.0, 0.1);
}

TEST(RolloutSimulationTest, ASharedHostSlowsEveryNodeTogether) {
  RolloutScenario scenario = Fleet(4, 1, 4 * kGigabyte, 1 * kGigabyte);
  scenario.nodes.front().holds_ready = true;
  scenario.nodes.front().stages = false;
  scenario.control.shared_host_bytes_per_second = 1.5 * kGigabyte;  // 3 x 4 GB = 12 GB: >= 8 s
  const RolloutOutcome outcome = Simulate(scenario);
  ASSERT_TRUE(outcome.complete);
  EXPECT_GE(outcome.finished_at, 8.0);
  EXPECT_LE(outcome.finished_at, 8.0 * 1.15 + 0.5);
}

TEST(RolloutSimulationTest, AStaggeredNodeCountsFromItsOwnQueueing) {
  RolloutScenario scenario = Fleet(2, 1, 1 * kGigabyte, 1 * kGigabyte);
  scenario.nodes[1].queued_at = 20;
  const RolloutOutcome outcome = Simulate(scenario);
  ASSERT_TRUE(outcome.complete);
  ASSERT_EQ(outcome.nodes.size(), 2u);
  EXPECT_GE(outcome.nodes[1].ready_at, 20.0);
  // It reads the Ready first node: one NIC's time, not the first node's wait for grants.
  EXPECT_LE(outcome.nodes[1].ready_at - 20.0, 1.0 + ControlModel{}.source_poll_seconds + 0.1);
}

TEST(RolloutSimulationTest, ARunThatCannotFinishStopsAtItsLimit) {
  RolloutScenario scenario = Fleet(2, 1, 4 * kGigabyte, 1 * kGigabyte);
  scenario.origins.front().bytes_per_second = 1e6;  // 4,000 s for one copy
  scenario.time_limit_seconds = 30;
  const RolloutOutcome outcome = Simulate(scenario);
  EXPECT_FALSE(outcome.complete);
  EXPECT_GE(outcome.finished_at, 30.0);
  EXPECT_EQ(StagingQuantile(outcome, 0.5), -1);
}

TEST(RolloutSimulationTest, TheEarliestFileFirstLetsFollowersStartBeforeTheSeederEnds) {
  // The origin is the bottleneck: with the seeder's streams spread over every file, no file is
  // servable until the end; earliest first makes the first ones servable early.
  RolloutScenario scenario = Fleet(8, 1, 8 * kGigabyte, 1 * kGigabyte);
  scenario.origins.front().bytes_per_second = 1 * kGigabyte;
  const RolloutOutcome earliest = Simulate(scenario);
  scenario.control.earliest_file_first = false;
  const RolloutOutcome round_robin = Simulate(scenario);
  ASSERT_TRUE(earliest.complete);
  ASSERT_TRUE(round_robin.complete);
  EXPECT_LT(StagingQuantile(earliest, 0.99), 0.9 * StagingQuantile(round_robin, 0.99));
}

TEST(RolloutSimulationTest, OneFilesHashBoundsItsPace) {
  RolloutScenario scenario = Fleet(1, 1, 4 * kGigabyte, 4 * kGigabyte);  // one 4 GB file
  scenario.control.hash_bytes_per_second = 0.5 * kGigabyte;
  const RolloutOutcome outcome = Simulate(scenario);
  ASSERT_TRUE(outcome.complete);
  EXPECT_NEAR(StagingQuantile(outcome, 1.0), 8.0, 0.1);
}

TEST(RolloutSimulationTest, ASpecLagDelaysWhatTheAgentsDo) {
  RolloutScenario scenario = Fleet(1, 1, 1 * kGigabyte, 1 * kGigabyte);
  const double prompt = StagingQuantile(Simulate(scenario), 1.0);
  scenario.control.spec_lag_seconds = 3;
  const double late = StagingQuantile(Simulate(scenario), 1.0);
  EXPECT_NEAR(late - prompt, 3.0, 0.3);
}

TEST(RolloutSimulationTest, TheOperatorsPolicyCostIsMeasured) {
  const RolloutOutcome outcome = Simulate(Fleet(200, 2, 2 * kGigabyte, 1 * kGigabyte));
  ASSERT_TRUE(outcome.complete);
  EXPECT_GT(outcome.operator_passes, 0);
  EXPECT_GT(outcome.policy.peer_choice + outcome.policy.fleet_plan, 0);
  EXPECT_GE(outcome.policy.slowest_pass, 0);
  // Lists are written when they change, not on every pass for every node.
  EXPECT_LT(outcome.peer_list_writes, outcome.operator_passes * 200);
}

}  // namespace
}  // namespace modelplane::simulation
