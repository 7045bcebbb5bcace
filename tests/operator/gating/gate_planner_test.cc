#include "operator/gating/gate_planner.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

constexpr std::int64_t kGiB = 1LL << 30;

NodeFacts Gpu(const std::string& name, int gpus = 8) {
  return {.name = name,
          .labels = {{"kubernetes.io/hostname", name}},
          .allocatable = {{"cpu", 64'000}, {"pods", 110'000}, {"nvidia.com/gpu", gpus * 1000LL}},
          .ready = true};
}

PodFacts Serving(const std::string& name, int gpus = 1) {
  return {.namespace_name = "models",
          .name = name,
          .labels = {{"app", "llama"}},
          .requests = {{"cpu", 1000}, {"pods", 1000}, {"nvidia.com/gpu", gpus * 1000LL}}};
}

PodFacts OnePerHost(PodFacts pod) {
  pod.host_anti_affinity = {{.selector = {.match_labels = {{"app", "llama"}}}}};
  return pod;
}

PrestageCandidate Cache(const std::string& name, HeldState held, const std::string& zone = "a") {
  return {.name = name,
          .labels = {{"topology.kubernetes.io/zone", zone}},
          .ready = true,
          .capacity_bytes = 100 * kGiB,
          .held = held};
}

struct Cluster {
  GatePlanRequest request{.revision = "models/llama-r2", .total_bytes = 10 * kGiB};

  Cluster& AddNode(NodeFacts node, HeldState held, const std::string& zone = "a") {
    request.caches.push_back(Cache(node.name, held, zone));
    request.nodes.push_back(std::move(node));
    return *this;
  }
  Cluster& Run(const std::string& node, PodFacts pod) {
    pod.node_name = node;
    request.residents[node].push_back(std::move(pod));
    return *this;
  }
};

TEST(GatePlannerTest, UngatesToTheReadyNodesThatCanTakeThePod) {
  Cluster cluster;
  cluster.AddNode(Gpu("gpu-0"), HeldState::kReady)
      .AddNode(Gpu("gpu-1"), HeldState::kNone)
      .AddNode(Gpu("gpu-2"), HeldState::kReady);
  cluster.request.gated = {Serving("llama-0")};
  const GatePlan plan = PlanGates(cluster.request);
  ASSERT_EQ(plan.decisions.size(), 1u);
  EXPECT_TRUE(plan.decisions[0].ungate);
  EXPECT_THAT(plan.decisions[0].nodes, ElementsAre("gpu-0", "gpu-2"));
  EXPECT_THAT(plan.staging_nodes, IsEmpty());
}

TEST(GatePlannerTest, AFullReadyNodeIsNeverATarget) {
  Cluster cluster;
  cluster.AddNode(Gpu("gpu-0", 1), HeldState::kReady).AddNode(Gpu("gpu-1"), HeldState::kNone);
  cluster.Run("gpu-0", Serving("other-app"));
  cluster.request.gated = {Serving("llama-0")};
  const GatePlan plan = PlanGates(cluster.request);
  EXPECT_FALSE(plan.decisions[0].ungate);
  EXPECT_THAT(plan.staging_nodes, ElementsAre("gpu-1"));
  EXPECT_THAT(plan.decisions[0].message,
              HasSubstr("waiting for ModelRevision models/llama-r2 on 1 more node: gpu-1"));
}

// A rolling update's next pod: the only Ready node is full with an old pod being deleted. The
// pod waits for that room instead of asking another node for a whole copy; an old pod stuck
// well past its grace period is not waited for.
TEST(GatePlannerTest, APodWaitsForTheRoomAPodBeingDeletedFrees) {
  Cluster cluster;
  cluster.AddNode(Gpu("gpu-0", 1), HeldState::kReady).AddNode(Gpu("gpu-1"), HeldState::kNone);
  cluster.request.now = std::chrono::system_clock::now();
  PodFacts old_pod = Serving("llama-old");
  old_pod.deletion_deadline = cluster.request.now + std::chrono::seconds(20);
  cluster.Run("gpu-0", old_pod);
  cluster.request.gated = {Serving("llama-new")};
  GatePlan plan = PlanGates(cluster.request);
  EXPECT_FALSE(plan.decisions[0].ungate);
  EXPECT_THAT(plan.staging_nodes, IsEmpty());
  EXPECT_THAT(plan.decisions[0].message, HasSubstr("gpu-0, where a pod being deleted frees"));

  cluster.request.residents["gpu-0"][0].deletion_deadline =
      cluster.request.now - 2 * kTerminationSlack;
  plan = PlanGates(cluster.request);
  EXPECT_THAT(plan.staging_nodes, ElementsAre("gpu-1"));
}

TEST(GatePlannerTest, TwoPodsNeverShareTheLastFreeGpu) {
  Cluster cluster;
  cluster.AddNode(Gpu("gpu-0", 1), HeldState::kReady).AddNode(Gpu("gpu-1"), HeldState::kNone);
  cluster.request.gated = {Serving("llama-0"), Serving("llama-1")};
  const GatePlan plan = PlanGates(cluster.request);
  EXPECT_TRUE(plan.decisions[0].ungate);
  EXPECT_THAT(plan.decisions[0].nodes, ElementsAre("gpu-0"));
  EXPECT_FALSE(plan.decisions[1].ungate);
  EXPECT_THAT(plan.staging_nodes, ElementsAre("gpu-1"));
}

TEST(GatePlannerTest, PodsLetGoEarlierKeepTheirRoom) {
  Cluster cluster;
  cluster.AddNode(Gpu("gpu-0", 1), HeldState::kReady).AddNode(Gpu("gpu-1"), HeldState::kNone);
  cluster.request.unbound = {{.facts = Serving("llama-0"), .narrowed_to = {"gpu-0"}}};
  cluster.request.gated = {Serving("llama-1")};
  const GatePlan plan = PlanGates(cluster.request);
  EXPECT_FALSE(plan.decisions[0].ungate);
  EXPECT_THAT(plan.staging_nodes, ElementsAre("gpu-1"));
}

TEST(GatePlannerTest, APodLetGoHoldsEveryNodeItMayChoose) {
  // The first pod may land on either node; until it is bound the second cannot be promised
  // the other one, but it needs no new copy either.
  Cluster cluster;
  cluster.AddNode(Gpu("gpu-0"), HeldState::kReady)
      .AddNode(Gpu("gpu-1"), HeldState::kReady)
      .AddNode(Gpu("gpu-2"), HeldState::kNone);
  cluster.request.gated = {OnePerHost(Serving("llama-0")), OnePerHost(Serving("llama-1"))};
  const GatePlan plan = PlanGates(cluster.request);
  EXPECT_TRUE(plan.decisions[0].ungate);
  EXPECT_THAT(plan.decisions[0].nodes, ElementsAre("gpu-0", "gpu-1"));
  EXPECT_FALSE(plan.decisions[1].ungate);
  EXPECT_THAT(plan.decisions[1].message, HasSubstr("being scheduled"));
  EXPECT_THAT(plan.staging_nodes, IsEmpty());

  // Once it is bound to gpu-1 the second goes to gpu-0.
  cluster.Run("gpu-1", OnePerHost(Serving("llama-0")));
  cluster.request.gated = {OnePerHost(Serving("llama-1"))};
  const GatePlan next = PlanGates(cluster.request);
  EXPECT_TRUE(next.decisions[0].ungate);
  EXPECT_THAT(next.decisions[0].nodes, ElementsAre("gpu-0"));
}

TEST(GatePlannerTest, AnUnboundPodHoldsEveryNodeItWasNarrowedTo) {
  Cluster cluster;
  cluster.AddNode(Gpu("gpu-0"), HeldState::kReady)
      .AddNode(Gpu("gpu-1"), HeldState::kReady)
      .AddNode(Gpu("gpu-2"), HeldState::kNone);
  cluster.request.unbound = {
      {.facts = OnePerHost(Serving("llama-0")), .narrowed_to = {"gpu-0", "gpu-1"}}};
  cluster.request.gated = {OnePerHost(Serving("llama-1")), OnePerHost(Serving("llama-2"))};
  const GatePlan plan = PlanGates(cluster.request);
  EXPECT_FALSE(plan.decisions[0].ungate);
  EXPECT_THAT(plan.decisions[0].message, HasSubstr("being scheduled"));
  EXPECT_FALSE(plan.decisions[1].ungate);
  EXPECT_THAT(plan.staging_nodes, ElementsAre("gpu-2")) << "only the third pod needs a copy";
}

TEST(GatePlannerTest, HostAntiAffinitySpreadsPodsAndAsksForMoreNodes) {
  Cluster cluster;
  cluster.AddNode(Gpu("gpu-0"), HeldState::kReady, "a")
      .AddNode(Gpu("gpu-1"), HeldState::kReady, "b")
      .AddNode(Gpu("gpu-2"), HeldState::kNone, "a")
      .AddNode(Gpu("gpu-3"), HeldState::kNone, "b");
  cluster.Run("gpu-0", OnePerHost(Serving("llama-old")));
  cluster.request.gated = {OnePerHost(Serving("llama-0")), OnePerHost(Serving("llama-1")),
                           OnePerHost(Serving("llama-2"))};
  const GatePlan plan = PlanGates(cluster.request);
  EXPECT_TRUE(plan.decisions[0].ungate);
  EXPECT_THAT(plan.decisions[0].nodes, ElementsAre("gpu-1"));
  EXPECT_FALSE(plan.decisions[1].ungate);
  EXPECT_FALSE(plan.decisions[2].ungate);
  // One per host, so two new nodes; each zone already has one copy: names decide.
  EXPECT_THAT(plan.staging_nodes, ElementsAre("gpu-2", "gpu-3"));
  EXPECT_THAT(plan.decisions[1].message, HasSubstr("on 2 more nodes"));
}

TEST(GatePlannerTest, StagingPrefersANodeAlreadyStagingThenTheEmptierZone) {
  Cluster cluster;
  cluster.AddNode(Gpu("gpu-0"), HeldState::kReady, "a")
      .AddNode(Gpu("gpu-1"), HeldState::kNone, "a")
      .AddNode(Gpu("gpu-2"), HeldState::kNone, "b")
      .AddNode(Gpu("gpu-3"), HeldState::kStaging, "a");
  cluster.Run("gpu-0", OnePerHost(Serving("llama-old")));
  cluster.request.progress["gpu-3"] = {.bytes_done = 47, .bytes_total = 100};
  cluster.request.gated = {OnePerHost(Serving("llama-0")), OnePerHost(Serving("llama-1"))};
  const GatePlan plan = PlanGates(cluster.request);
  EXPECT_THAT(plan.staging_nodes, ElementsAre("gpu-2", "gpu-3"));
  EXPECT_THAT(plan.decisions[0].message, HasSubstr("gpu-3 staging 40%"));
  EXPECT_THAT(plan.decisions[1].message, HasSubstr("gpu-2 staging queued"));
}

TEST(GatePlannerTest, PodsThatFitTogetherShareOneStagingNode) {
  Cluster cluster;
  cluster.AddNode(Gpu("gpu-0"), HeldState::kNone).AddNode(Gpu("gpu-1"), HeldState::kNone);
  cluster.request.gated = {Serving("llama-0", 4), Serving("llama-1", 4), Serving("llama-2", 4)};
  const GatePlan plan = PlanGates(cluster.request);
  EXPECT_THAT(plan.staging_nodes, ElementsAre("gpu-0", "gpu-1"));
}

TEST(GatePlannerTest, ANodeWithoutCacheRoomIsNotAskedToStage) {
  Cluster cluster;
  cluster.AddNode(Gpu("gpu-0"), HeldState::kNone).AddNode(Gpu("gpu-1"), HeldState::kNone);
  cluster.request.caches[0].used_bytes = 95 * kGiB;
  cluster.request.gated = {Serving("llama-0")};
  const GatePlan plan = PlanGates(cluster.request);
  EXPECT_THAT(plan.staging_nodes, ElementsAre("gpu-1"));
}

// `count` Ready nodes gpu-000, gpu-001, ...: the first half in zone "a", the rest in "b".
Cluster ManyReadyNodes(int count) {
  Cluster cluster;
  for (int i = 0; i < count; ++i) {
    cluster.AddNode(Gpu(fmt::format("gpu-{:03}", i)), HeldState::kReady, i < count / 2 ? "a" : "b");
  }
  return cluster;
}

long InZone(const std::vector<std::string>& nodes, const Cluster& cluster,
            const std::string& zone) {
  return std::count_if(nodes.begin(), nodes.end(), [&](const std::string& node) {
    return std::any_of(cluster.request.caches.begin(), cluster.request.caches.end(),
                       [&](const PrestageCandidate& cache) {
                         return cache.name == node &&
                                cache.labels.at("topology.kubernetes.io/zone") == zone;
                       });
  });
}

std::set<std::string> Common(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::set<std::string> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

TEST(GatePlannerTest, NarrowsToAtMostTheLimitTakingZonesInTurn) {
  Cluster cluster = ManyReadyNodes(250);
  cluster.request.gated = {Serving("llama-0")};
  const GatePlan plan = PlanGates(cluster.request);
  ASSERT_TRUE(plan.decisions[0].ungate);
  const std::vector<std::string>& nodes = plan.decisions[0].nodes;
  ASSERT_THAT(nodes, SizeIs(kMaxNarrowedNodes));
  EXPECT_TRUE(std::is_sorted(nodes.begin(), nodes.end()));
  EXPECT_EQ(InZone(nodes, cluster, "a"), 50);
  EXPECT_EQ(InZone(nodes, cluster, "b"), 50);
  EXPECT_THAT(plan.decisions[0].message,
              HasSubstr("is verified on gpu-000, gpu-001, gpu-002, gpu-003, gpu-004 and 95 more "
                        "(narrowed to 100 of the 250 nodes that hold it and can take this pod)"));
}

TEST(GatePlannerTest, EveryNodeThatFitsWhenThereAreNoMoreThanTheLimit) {
  Cluster cluster = ManyReadyNodes(static_cast<int>(kMaxNarrowedNodes));
  cluster.request.gated = {Serving("llama-0")};
  const GatePlan plan = PlanGates(cluster.request);
  EXPECT_THAT(plan.decisions[0].nodes, SizeIs(kMaxNarrowedNodes));
  EXPECT_THAT(plan.decisions[0].message, Not(HasSubstr("narrowed to")));
}

TEST(GatePlannerTest, PodsOfOneRolloutAreNarrowedToTheLeastNarrowedNodes) {
  Cluster cluster = ManyReadyNodes(250);
  cluster.request.gated = {Serving("llama-0"), Serving("llama-1"), Serving("llama-2")};
  const GatePlan plan = PlanGates(cluster.request);
  for (const PodGateDecision& decision : plan.decisions) {
    ASSERT_TRUE(decision.ungate);
    ASSERT_THAT(decision.nodes, SizeIs(kMaxNarrowedNodes));
  }
  EXPECT_THAT(Common(plan.decisions[0].nodes, plan.decisions[1].nodes), IsEmpty());
  // 50 nodes are left that no pod is narrowed to; the third pod gets them and 50 of the others,
  // still half in each zone.
  const std::vector<std::string>& third = plan.decisions[2].nodes;
  EXPECT_EQ(
      Common(third, plan.decisions[0].nodes).size() + Common(third, plan.decisions[1].nodes).size(),
      50u);
  EXPECT_EQ(InZone(third, cluster, "a"), 50);
  EXPECT_EQ(InZone(third, cluster, "b"), 50);
}

TEST(GatePlannerTest, APodAvoidsTheNodesUnboundPodsAreNarrowedTo) {
  Cluster cluster = ManyReadyNodes(250);
  std::vector<std::string> earlier;
  earlier.reserve(100);
  for (int i = 0; i < 100; ++i) earlier.push_back(fmt::format("gpu-{:03}", i * 2));
  cluster.request.unbound = {{.facts = Serving("llama-0"), .narrowed_to = earlier}};
  cluster.request.gated = {Serving("llama-1")};
  const GatePlan plan = PlanGates(cluster.request);
  ASSERT_TRUE(plan.decisions[0].ungate);
  EXPECT_THAT(Common(plan.decisions[0].nodes, earlier), IsEmpty());
}

TEST(GatePlannerTest, OnePerHostPodsAreLetGoTogetherWhenEnoughNodesHoldTheRevision) {
  // Each pod holds only the nodes it is narrowed to, so a second one-per-host pod need not wait
  // for the first to be bound.
  Cluster cluster = ManyReadyNodes(250);
  cluster.request.gated = {OnePerHost(Serving("llama-0")), OnePerHost(Serving("llama-1")),
                           OnePerHost(Serving("llama-2"))};
  const GatePlan plan = PlanGates(cluster.request);
  EXPECT_TRUE(plan.decisions[0].ungate);
  EXPECT_TRUE(plan.decisions[1].ungate);
  ASSERT_TRUE(plan.decisions[2].ungate);
  EXPECT_THAT(plan.decisions[2].nodes, SizeIs(50)) << "the 50 nodes the others left";
  EXPECT_THAT(Common(plan.decisions[0].nodes, plan.decisions[1].nodes), IsEmpty());
  EXPECT_THAT(plan.staging_nodes, IsEmpty());
}

TEST(GatePlannerTest, SaysWhyNoNodeCanTakeThePod) {
  Cluster cluster;
  NodeFacts tainted = Gpu("gpu-0");
  tainted.taints = {{.key = "dedicated", .value = "training", .effect = "NoSchedule"}};
  cluster.AddNode(tainted, HeldState::kReady).AddNode(Gpu("gpu-1", 2), HeldState::kNone);
  cluster.request.gated = {Serving("llama-0", 4)};
  const GatePlan plan = PlanGates(cluster.request);
  EXPECT_FALSE(plan.decisions[0].ungate);
  EXPECT_THAT(plan.staging_nodes, IsEmpty());
  EXPECT_THAT(plan.decisions[0].message, HasSubstr("no node can take this pod"));
  EXPECT_THAT(plan.decisions[0].message, HasSubstr("gpu-1 has not enough free nvidia.com/gpu"));
  EXPECT_THAT(plan.decisions[0].message, HasSubstr("gpu-0 (holds it) has taint dedicated"));
}

// LoRA adapters: the pod mounts them too, so it goes only where they are Ready as well.
TEST(GatePlannerTest, APodWithAdaptersGoesOnlyWhereTheyAreReadyToo) {
  Cluster cluster;
  cluster.AddNode(Gpu("gpu-0"), HeldState::kReady)
      .AddNode(Gpu("gpu-1"), HeldState::kReady)
      .AddNode(Gpu("gpu-2"), HeldState::kNone);
  cluster.request.gated = {Serving("llama-0"), Serving("plain-0")};
  cluster.request.adapters["llama-0"] = {.adapters = "models/sql-lora",
                                         .ready_nodes = {"gpu-1", "gpu-2"}};
  const GatePlan plan = PlanGates(cluster.request);
  ASSERT_EQ(plan.decisions.size(), 2u);
  EXPECT_TRUE(plan.decisions[0].ungate);
  EXPECT_THAT(plan.decisions[0].nodes, ElementsAre("gpu-1"))
      << "gpu-0 lacks the adapter, gpu-2 the revision";
  EXPECT_THAT(plan.decisions[0].message,
              HasSubstr("ModelRevision models/llama-r2 and adapters models/sql-lora are verified "
                        "on gpu-1"));
  EXPECT_THAT(plan.decisions[1].nodes, ElementsAre("gpu-0", "gpu-1")) << "a pod without adapters";
}

// The adapters are staged beside their base: a pod waits for them where the revision is,
// instead of asking for another copy of the revision elsewhere.
TEST(GatePlannerTest, APodWaitsForItsAdaptersWhereTheRevisionIsReady) {
  Cluster cluster;
  cluster.AddNode(Gpu("gpu-0", 1), HeldState::kReady).AddNode(Gpu("gpu-1"), HeldState::kNone);
  cluster.request.gated = {Serving("llama-0"), Serving("llama-1")};
  for (const char* pod : {"llama-0", "llama-1"}) {
    cluster.request.adapters[pod] = {.adapters = "models/sql-lora, models/chat-lora"};
  }
  const GatePlan plan = PlanGates(cluster.request);
  EXPECT_FALSE(plan.decisions[0].ungate);
  EXPECT_THAT(plan.decisions[0].message,
              HasSubstr("waiting for adapters models/sql-lora, models/chat-lora on gpu-0, where "
                        "ModelRevision models/llama-r2 is verified"));
  // gpu-0 has one GPU: the second pod needs another node, which stages the revision.
  EXPECT_FALSE(plan.decisions[1].ungate);
  EXPECT_THAT(plan.staging_nodes, ElementsAre("gpu-1"));
  EXPECT_THAT(plan.decisions[1].message,
              HasSubstr("waiting for ModelRevision models/llama-r2 on 1 more node: gpu-1"));
}

}  // namespace
}  // namespace modelplane::controller
