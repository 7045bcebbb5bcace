#include "operator/rollouts/rollout_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace api = core::api;

constexpr std::int64_t kGiB = 1LL << 30;
// NOLINTNEXTLINE(cert-err58-cpp): a test constant; a throw before main ends the test anyway
const api::Timestamp kNow = api::Timestamp(std::chrono::seconds(1'800'000'000));

Workload Deployment(const std::string& current, const std::string& previous, bool complete,
                    int surge = 0) {
  return {.kind = "Deployment",
          .namespace_name = "models",
          .name = "llama",
          .replicas = 4,
          .current_revision = current,
          .previous_revision = previous,
          .complete = complete,
          .max_surge = surge};
}

PrestageCandidate Cache(const std::string& node, HeldState held, std::string zone = "a") {
  return {.name = node,
          .labels = {{"topology.kubernetes.io/zone", zone}},
          .ready = true,
          .capacity_bytes = 100 * kGiB,
          .held = held};
}

WorkloadPods Pods(Workload workload, const std::vector<std::pair<std::string, std::string>>& pods) {
  WorkloadPods entry{.workload = std::move(workload)};
  int n = 0;
  for (auto& [revision, node] : pods) {
    entry.pods.push_back(
        {.uid = std::to_string(n++), .revision = revision, .node = node, .ready = true});
  }
  return entry;
}

RolloutPlanRequest Request(const std::string& revision) {
  return {.revision = revision, .total_bytes = 10 * kGiB, .now = kNow};
}

TEST(RolloutPlanTest, ARolloutStagesTheNewRevisionWhereTheOldPodsRun) {
  RolloutPlanRequest request = Request("llama-r2");
  request.workloads = {Pods(
      Deployment("llama-r2", "llama-r1", false),
      {{"llama-r1", "gpu-0"}, {"llama-r1", "gpu-1"}, {"llama-r1", "gpu-2"}, {"llama-r2", ""}})};
  request.caches = {Cache("gpu-0", HeldState::kReady), Cache("gpu-1", HeldState::kStaging),
                    Cache("gpu-2", HeldState::kNone), Cache("gpu-3", HeldState::kNone)};
  const RolloutPlan plan = PlanRollouts(request);
  EXPECT_EQ(plan.nodes.size(), 3u);
  for (const char* node : {"gpu-0", "gpu-1", "gpu-2"}) {
    ASSERT_TRUE(plan.nodes.contains(node)) << node;
    EXPECT_EQ(plan.nodes.at(node).reason, "rollout");
    EXPECT_FALSE(plan.nodes.at(node).pinned);
  }
  const RolloutBarrier& barrier = plan.barriers.at("Deployment/models/llama");
  EXPECT_THAT(barrier.nodes, ElementsAre("gpu-0", "gpu-1", "gpu-2"));
  EXPECT_EQ(barrier.ready, 1);
  EXPECT_FALSE(barrier.met);
  EXPECT_THAT(barrier.message, HasSubstr("Ready on 1 of 3 nodes"));
  ASSERT_EQ(plan.workloads.size(), 1u);
  EXPECT_EQ(plan.workloads[0].role, "current");
  EXPECT_EQ(plan.workloads[0].pods, 1);
}

TEST(RolloutPlanTest, AnInPlaceReplacementKeepsTheFreedNodeInTheBarrier) {
  // maxSurge 0: the old pod on gpu-1 is gone already, its node still lists r1 for pods.
  RolloutPlanRequest request = Request("llama-r2");
  request.workloads = {Pods(Deployment("llama-r2", "llama-r1", false),
                            {{"llama-r1", "gpu-0"}, {"llama-r1", "gpu-2"}, {"llama-r2", ""}})};
  request.caches = {Cache("gpu-0", HeldState::kReady), Cache("gpu-1", HeldState::kStaging),
                    Cache("gpu-2", HeldState::kReady)};
  request.serving_nodes["llama-r1"] = {"gpu-0", "gpu-1", "gpu-2"};
  const RolloutPlan plan = PlanRollouts(request);
  const RolloutBarrier& barrier = plan.barriers.at("Deployment/models/llama");
  EXPECT_THAT(barrier.nodes, ElementsAre("gpu-0", "gpu-1", "gpu-2"));
  EXPECT_FALSE(barrier.met) << "gpu-1 still stages it";
}

TEST(RolloutPlanTest, TheBarrierIsMetWhenEveryOldNodeHoldsItReady) {
  RolloutPlanRequest request = Request("llama-r2");
  request.workloads = {Pods(Deployment("llama-r2", "llama-r1", false),
                            {{"llama-r1", "gpu-0"}, {"llama-r1", "gpu-1"}})};
  request.caches = {Cache("gpu-0", HeldState::kReady), Cache("gpu-1", HeldState::kReady)};
  const RolloutPlan plan = PlanRollouts(request);
  const RolloutBarrier& barrier = plan.barriers.at("Deployment/models/llama");
  EXPECT_TRUE(barrier.met);
  EXPECT_THAT(barrier.message, HasSubstr("may roll"));
}

TEST(RolloutPlanTest, APausedRolloutHoldsItsNewPods) {
  RolloutPlanRequest request = Request("llama-r2");
  Workload paused = Deployment("llama-r2", "llama-r1", false);
  paused.paused = true;
  request.workloads = {Pods(paused, {{"llama-r1", "gpu-0"}, {"llama-r2", ""}})};
  request.caches = {Cache("gpu-0", HeldState::kReady)};
  const RolloutPlan plan = PlanRollouts(request);
  const RolloutBarrier& barrier = plan.barriers.at("Deployment/models/llama");
  EXPECT_FALSE(barrier.met) << "Ready everywhere, but paused";
  EXPECT_THAT(barrier.message, HasSubstr("is paused"));
}

TEST(RolloutPlanTest, ANodeThatCannotHoldItDoesNotBlockTheRollout) {
  RolloutPlanRequest request = Request("llama-r2");
  request.workloads = {Pods(Deployment("llama-r2", "llama-r1", false),
                            {{"llama-r1", "gpu-0"}, {"llama-r1", "gpu-1"}, {"llama-r1", "gpu-2"}})};
  PrestageCandidate full = Cache("gpu-2", HeldState::kNone);
  full.used_bytes = 95 * kGiB;
  request.caches = {Cache("gpu-0", HeldState::kReady), Cache("gpu-1", HeldState::kStaging), full};
  request.failed_nodes = {"gpu-1"};
  const RolloutPlan plan = PlanRollouts(request);
  const RolloutBarrier& barrier = plan.barriers.at("Deployment/models/llama");
  EXPECT_THAT(barrier.nodes, ElementsAre("gpu-0"));
  EXPECT_TRUE(barrier.met);
  EXPECT_THAT(barrier.message, HasSubstr("not staged on gpu-1, gpu-2"));
  EXPECT_FALSE(plan.nodes.contains("gpu-2"));
}

TEST(RolloutPlanTest, SurgeNodesComeFromThePlacementRules) {
  RolloutPlanRequest request = Request("llama-r2");
  request.workloads = {Pods(Deployment("llama-r2", "llama-r1", false, 1),
                            {{"llama-r1", "gpu-0"}, {"llama-r1", "gpu-1"}})};
  request.caches = {Cache("gpu-0", HeldState::kNone, "a"), Cache("gpu-1", HeldState::kNone, "b"),
                    Cache("gpu-2", HeldState::kNone, "a"),
                    Cache("gpu-3", HeldState::kStaging, "b")};
  const RolloutPlan plan = PlanRollouts(request);
  EXPECT_EQ(plan.nodes.size(), 3u);
  EXPECT_TRUE(plan.nodes.contains("gpu-3")) << "the placement rules prefer a node staging it";
  EXPECT_THAT(plan.barriers.at("Deployment/models/llama").nodes, ElementsAre("gpu-0", "gpu-1"))
      << "surge nodes are not part of the barrier";
}

TEST(RolloutPlanTest, ThePreviousRevisionIsPinnedWhileRollingAndForTheWindowAfter) {
  RolloutPlanRequest request = Request("llama-r1");
  request.rollback_window = std::chrono::hours(2);
  request.caches = {Cache("gpu-0", HeldState::kReady), Cache("gpu-1", HeldState::kReady),
                    Cache("gpu-2", HeldState::kNone)};
  const auto rolling = Pods(Deployment("llama-r2", "llama-r1", false),
                            {{"llama-r1", "gpu-0"}, {"llama-r2", "gpu-1"}, {"llama-r2", "gpu-2"}});
  request.workloads = {rolling};
  RolloutPlan plan = PlanRollouts(request);
  ASSERT_EQ(plan.nodes.size(), 2u) << "pinned where it is held, where the workload's pods run";
  EXPECT_TRUE(plan.nodes.at("gpu-0").pinned);
  EXPECT_EQ(plan.nodes.at("gpu-0").reason, "rollback");
  EXPECT_FALSE(plan.nodes.at("gpu-1").pinned_until) << "no end while the rollout runs";
  EXPECT_EQ(plan.workloads[0].role, "previous");
  EXPECT_FALSE(plan.workloads[0].completed_at);

  // Complete: the window starts now, and the status carries when.
  auto done = Pods(Deployment("llama-r2", "llama-r1", true),
                   {{"llama-r2", "gpu-0"}, {"llama-r2", "gpu-1"}});
  request.workloads = {done};
  plan = PlanRollouts(request);
  ASSERT_TRUE(plan.nodes.at("gpu-0").pinned_until);
  EXPECT_EQ(*plan.nodes.at("gpu-0").pinned_until, kNow + std::chrono::hours(2));
  EXPECT_EQ(plan.workloads[0].completed_at, kNow);
  EXPECT_EQ(plan.next_change, kNow + std::chrono::hours(2));

  // An hour later the window is counted from the recorded completion, not from now.
  done.completed_at = kNow;
  request.workloads = {done};
  request.now = kNow + std::chrono::hours(1);
  plan = PlanRollouts(request);
  EXPECT_EQ(*plan.nodes.at("gpu-0").pinned_until, kNow + std::chrono::hours(2));

  // After it, nothing is pinned, and the workload is still listed as previous.
  request.now = kNow + std::chrono::hours(3);
  plan = PlanRollouts(request);
  EXPECT_TRUE(plan.nodes.empty());
  EXPECT_EQ(plan.workloads[0].completed_at, kNow);
  EXPECT_FALSE(plan.next_change);
}

TEST(RolloutPlanTest, NodesThePreviousRevisionServedStayPinnedAfterItsPodsLeft) {
  RolloutPlanRequest request = Request("llama-r1");
  request.caches = {Cache("gpu-0", HeldState::kReady), Cache("gpu-1", HeldState::kReady),
                    Cache("gpu-2", HeldState::kNone)};
  request.serving_nodes["llama-r1"] = {"gpu-1", "gpu-2"};
  request.workloads = {Pods(Deployment("llama-r2", "llama-r1", false), {{"llama-r2", "gpu-0"}})};
  const RolloutPlan plan = PlanRollouts(request);
  EXPECT_TRUE(plan.nodes.contains("gpu-0"));
  EXPECT_TRUE(plan.nodes.contains("gpu-1")) << "its pod was replaced, the node still holds it";
  EXPECT_FALSE(plan.nodes.contains("gpu-2")) << "nothing to pin where it is not held";
}

TEST(RolloutPlanTest, APinOutlastsARolloutIntentOnTheSameNode) {
  // Undo: r1 is the current revision again and r2 the previous; another workload still
  // rolls away from r1. The pin wins on the shared node.
  RolloutPlanRequest request = Request("llama-r1");
  request.caches = {Cache("gpu-0", HeldState::kReady)};
  Workload other = Deployment("llama-r9", "llama-r1", false);
  other.name = "other";
  request.workloads = {Pods(Deployment("llama-r1", "llama-r2", false), {{"llama-r2", "gpu-0"}}),
                       Pods(other, {{"llama-r1", "gpu-0"}})};
  const RolloutPlan plan = PlanRollouts(request);
  EXPECT_TRUE(plan.nodes.at("gpu-0").pinned);
  EXPECT_EQ(plan.nodes.at("gpu-0").reason, "rollback");
  EXPECT_TRUE(plan.barriers.at("Deployment/models/llama").met);
  EXPECT_EQ(plan.workloads.size(), 2u);
}

TEST(RolloutPlanTest, AWorkloadNotRollingAsksForNothing) {
  RolloutPlanRequest request = Request("llama-r1");
  request.caches = {Cache("gpu-0", HeldState::kReady)};
  request.workloads = {Pods(Deployment("llama-r1", "", true), {{"llama-r1", "gpu-0"}})};
  const RolloutPlan plan = PlanRollouts(request);
  EXPECT_TRUE(plan.nodes.empty());
  EXPECT_TRUE(plan.barriers.empty());
  ASSERT_EQ(plan.workloads.size(), 1u);
  EXPECT_EQ(plan.workloads[0].pods, 1);
}

}  // namespace
}  // namespace modelplane::controller
