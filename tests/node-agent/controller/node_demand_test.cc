#include "node-agent/controller/node_demand.h"

#include <chrono>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

using std::chrono::seconds;

constexpr core::api::Timestamp kWallNow{std::chrono::sys_days{std::chrono::year{2026} / 12 / 7}};

core::api::DesiredRevision Desired(const std::string& name, const std::string& reason) {
  return {.revision = {.namespace_name = "serving", .name = name},
          .digest = "sha256:" + std::string(64, 'a'),
          .reason = reason};
}

core::Pod ServingPod(const std::string& uid, const std::string& revision, bool gated) {
  core::Pod pod;
  pod.metadata.name = "server-" + uid;
  pod.metadata.namespace_name = "serving";
  pod.metadata.uid = uid;
  pod.metadata.annotations["modelplane.io/revision"] = revision;
  if (gated) pod.readiness_gates = {"modelplane.io/weights-ready"};
  pod.phase = "Running";
  return pod;
}

std::vector<std::string> WantedNames(const NodeDemand& demand) {
  std::vector<std::string> names;
  names.reserve(demand.wanted.size());
  for (const WantedRevision& wanted : demand.wanted) names.push_back(wanted.reference.name);
  return names;
}

TEST(NodeDemandTest, TheOperatorsListComesFirstInItsOrderThenGatedPodsRevisionsOnce) {
  const NodeDemand demand = PlanNodeDemand(
      {Desired("r2", "prestage"), Desired("r1", "rollout"), Desired("r2", "in-use")},
      {ServingPod("u1", "r3", true), ServingPod("u2", "r1", true), ServingPod("u3", "r3", true)},
      kWallNow);
  EXPECT_THAT(WantedNames(demand), ::testing::ElementsAre("r2", "r1", "r3"));
  EXPECT_EQ(demand.wanted[0].reason, "prestage") << "the first entry of a name counts";
  EXPECT_EQ(demand.wanted[2].reason, "in-use");
  EXPECT_TRUE(demand.wanted[2].digest_hint.empty()) << "a pod names a revision, not a digest";
  EXPECT_EQ(demand.gated_pods.size(), 3U) << "every gated pod gets a verdict";
}

TEST(NodeDemandTest, ALapsedPinIsNotWantedAndAPinStillRunningIs) {
  core::api::DesiredRevision lapsed = Desired("old", "rollback");
  lapsed.pinned = true;
  lapsed.pinned_until = kWallNow - seconds(1);
  core::api::DesiredRevision running = Desired("kept", "rollback");
  running.pinned = true;
  running.pinned_until = kWallNow + seconds(60);
  core::api::DesiredRevision unpinned_with_date = Desired("plain", "prestage");
  unpinned_with_date.pinned_until = kWallNow - seconds(1);  // no pin: the date means nothing
  const NodeDemand demand = PlanNodeDemand({lapsed, running, unpinned_with_date}, {}, kWallNow);
  EXPECT_THAT(WantedNames(demand), ::testing::ElementsAre("kept", "plain"));
  EXPECT_TRUE(demand.wanted[0].pinned);
  // The pin lapses at its instant, not after it.
  lapsed.pinned_until = kWallNow;
  EXPECT_TRUE(PlanNodeDemand({lapsed}, {}, kWallNow).wanted.empty());
}

TEST(NodeDemandTest, LivePodsProtectWhatTheyNameGatedOrNot) {
  core::Pod finished = ServingPod("done", "r9", false);
  finished.phase = "Succeeded";
  core::Pod deleting = ServingPod("going", "r5", true);
  deleting.metadata.deletion_timestamp = kWallNow;
  const NodeDemand demand = PlanNodeDemand(
      {}, {ServingPod("plain", "r4", false), finished, deleting, ServingPod("other", "x/r6", true)},
      kWallNow);
  EXPECT_THAT(demand.pod_users, ::testing::ElementsAre(
                                    ::testing::Pair("serving/r4", ::testing::ElementsAre("plain")),
                                    ::testing::Pair("serving/r5", ::testing::ElementsAre("going"))))
      << "a finished pod reads nothing; a deleting one may still; another namespace's counts not";
  EXPECT_TRUE(demand.wanted.empty()) << "an ungated pod stages nothing; a deleting one neither";
  EXPECT_TRUE(demand.gated_pods.empty());
}

TEST(NodeDemandTest, APodWaitingFirstStagesBeforeARolloutARollbackAndAPrestage) {
  EXPECT_LT(StagingPriority("in-use"), StagingPriority("rollout"));
  EXPECT_LT(StagingPriority("rollout"), StagingPriority("rollback"));
  EXPECT_LT(StagingPriority("rollback"), StagingPriority("prestage"));
  EXPECT_EQ(StagingPriority("something-new"), StagingPriority("prestage"));
}

}  // namespace
}  // namespace modelplane::agent
