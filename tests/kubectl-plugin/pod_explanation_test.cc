#include "kubectl-plugin/pod_explanation.h"

#include <gtest/gtest.h>

#include "tests/kubectl-plugin/test_objects.h"

namespace modelplane::cli {
namespace {

using nlohmann::json;
using testing::FitsTerminal;

// The paragraph joined back into one line, so tests need not know where it wraps.
std::string Explain(const PodFacts& facts) {
  auto text = ExplainPod(facts, testing::Now());
  EXPECT_TRUE(text) << text.error().ToString();
  if (!text) return "";
  EXPECT_TRUE(FitsTerminal(*text)) << *text;
  EXPECT_TRUE(text->ends_with("\n"));
  std::string joined;
  for (const std::string& line : testing::Lines(*text))
    joined += (joined.empty() ? "" : " ") + line;
  return joined;
}

json StagedRevision() {
  json revision = testing::Revision();
  revision["status"] = testing::ReadyStatus();
  return revision;
}

TEST(PodExplanationTest, AGatedPodHearsWhereItsRevisionIsReadyStagingAndRefused) {
  const std::string text =
      Explain({.pod = testing::GatedPod(),
               .revision = StagedRevision(),
               .caches = {.items = testing::ThreeCaches()},
               .events = {testing::PodEvent("WaitingForWeights", "waiting for gpu-b to stage it.",
                                            "2026-01-01T11:58:00Z"),
                          testing::PodEvent("Old", "older", "2026-01-01T11:50:00Z")}});
  EXPECT_NE(text.find("Pod team-a/llama-0 is gated: it keeps the scheduling gate "
                      "modelplane.io/weights"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ModelRevision team-a/llama-r2 is Ready on 1 node (gpu-a)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("staging on gpu-b (25% of 140.0 GiB)"), std::string::npos) << text;
  EXPECT_NE(text.find("refused on gpu-c (InsufficientCapacity: needs 140.0 GiB"), std::string::npos)
      << text;
  EXPECT_NE(text.find("once one of the Ready nodes can take the pod"), std::string::npos) << text;
  EXPECT_NE(text.find("The latest event (Normal WaitingForWeights, 2m ago): waiting for gpu-b to "
                      "stage it."),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("older"), std::string::npos);
}

TEST(PodExplanationTest, AGatedPodWhoseRevisionDoesNotExist) {
  const std::string text = Explain({.pod = testing::GatedPod()});
  EXPECT_NE(text.find("ModelRevision team-a/llama-r2 does not exist; the pod stays gated until "
                      "it is created and staged"),
            std::string::npos)
      << text;
}

TEST(PodExplanationTest, AGatedPodOfARevokedRevision) {
  json revision = StagedRevision();
  revision["spec"]["revoked"] = true;
  const std::string text = Explain({.pod = testing::GatedPod(), .revision = revision});
  EXPECT_NE(text.find("is revoked"), std::string::npos) << text;
  EXPECT_NE(text.find("stays gated"), std::string::npos) << text;
}

TEST(PodExplanationTest, AGatedPodOfAnInvalidRevision) {
  json revision = testing::Revision();
  revision["status"] = {
      {"phase", "Invalid"},
      {"conditions", json::array({{{"type", "Valid"},
                                   {"status", "False"},
                                   {"reason", "InvalidSpec"},
                                   {"message", "spec.files[0].sha256: malformed"},
                                   {"lastTransitionTime", "2026-01-01T11:00:00Z"}}})}};
  const std::string text = Explain({.pod = testing::GatedPod(), .revision = revision});
  EXPECT_NE(
      text.find("is invalid (InvalidSpec: spec.files[0].sha256: malformed), so nothing stages it"),
      std::string::npos)
      << text;
}

TEST(PodExplanationTest, NobodyHoldingTheRevisionPointsAtTheOperator) {
  const std::string text =
      Explain({.pod = testing::GatedPod(), .revision = StagedRevision(), .caches = {.items = {}}});
  EXPECT_NE(text.find("Ready on no node"), std::string::npos) << text;
  EXPECT_NE(text.find("check that the operator runs"), std::string::npos) << text;
}

TEST(PodExplanationTest, UnlistableCachesUseTheRevisionsCounts) {
  const std::string text = Explain({.pod = testing::GatedPod(),
                                    .revision = StagedRevision(),
                                    .caches = {.unavailable = "not allowed"}});
  EXPECT_NE(text.find("Ready on 1 node, staging on 1 node, failed on 1 node"), std::string::npos)
      << text;
}

TEST(PodExplanationTest, SomeoneElsesGateIsNamed) {
  json pod = testing::Pod();
  pod["spec"]["schedulingGates"] = json::array({{{"name", "example.com/quota"}}});
  const std::string text = Explain({.pod = pod});
  EXPECT_NE(text.find("gated by scheduling gate example.com/quota, which modelplane does not "
                      "manage"),
            std::string::npos)
      << text;
}

TEST(PodExplanationTest, APendingPodQuotesTheScheduler) {
  json pod = testing::Pod();
  pod["status"]["conditions"] =
      json::array({{{"type", "PodScheduled"},
                    {"status", "False"},
                    {"reason", "Unschedulable"},
                    {"message", "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."}}});
  json event = testing::PodEvent("FailedScheduling",
                                 "0/4 nodes are available: 4 node(s) had "
                                 "untolerated taint.",
                                 "2026-01-01T11:59:30Z");
  event["type"] = "Warning";
  event["series"] = {{"count", 7}, {"lastObservedTime", "2026-01-01T11:59:50Z"}};
  const std::string text = Explain({.pod = pod, .revision = StagedRevision(), .events = {event}});
  EXPECT_NE(text.find("is pending: its gate is gone but the scheduler cannot place it "
                      "(Unschedulable: 0/4 nodes are available: 4 Insufficient nvidia.com/gpu)."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(Warning FailedScheduling, 10s ago, 7 times)"), std::string::npos) << text;
  // An event that only repeats the condition's message is left out.
  event["note"] = "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.";
  EXPECT_EQ(Explain({.pod = pod, .events = {event}}).find("FailedScheduling"), std::string::npos);
}

TEST(PodExplanationTest, ABoundPodWaitsForItsWeightsReadyCondition) {
  json pod = testing::Pod();
  pod["spec"]["nodeName"] = "gpu-b";
  pod["status"] = {{"phase", "Running"},
                   {"conditions", json::array({{{"type", "modelplane.io/weights-ready"},
                                                {"status", "False"},
                                                {"reason", "NotStaged"},
                                                {"message", "staging"}},
                                               {{"type", "Ready"}, {"status", "False"}}})}};
  const std::string text = Explain(
      {.pod = pod, .revision = StagedRevision(), .caches = {.items = testing::ThreeCaches()}});
  EXPECT_NE(text.find("runs on node gpu-b but is not ready: its readiness gate "
                      "modelplane.io/weights-ready is False (NotStaged: staging)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("On node gpu-b, ModelRevision team-a/llama-r2 is Staging, 25% of 140.0 GiB."),
            std::string::npos)
      << text;
}

TEST(PodExplanationTest, ABoundPodWithVerifiedWeightsButUnreadyContainers) {
  json pod = testing::Pod();
  pod["spec"]["nodeName"] = "gpu-a";
  pod["status"] = {
      {"phase", "Running"},
      {"conditions",
       json::array({{{"type", "modelplane.io/weights-ready"}, {"status", "True"}},
                    {{"type", "ContainersReady"},
                     {"status", "False"},
                     {"reason", "ContainersNotReady"},
                     {"message", "containers with unready status: [server]"}},
                    {{"type", "Ready"}, {"status", "False"}, {"reason", "ContainersNotReady"}}})}};
  const std::string text = Explain({.pod = pod, .revision = StagedRevision()});
  EXPECT_NE(text.find("its Ready condition is False (ContainersNotReady): containers with unready "
                      "status: [server]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("the cause lies in its containers"), std::string::npos) << text;
}

TEST(PodExplanationTest, ARunningReadyPodSaysSo) {
  json pod = testing::Pod();
  pod["spec"]["nodeName"] = "gpu-a";
  pod["status"] = {
      {"phase", "Running"},
      {"conditions", json::array({{{"type", "modelplane.io/weights-ready"}, {"status", "True"}},
                                  {{"type", "Ready"}, {"status", "True"}}})}};
  const std::string text = Explain({.pod = pod, .revision = StagedRevision()});
  EXPECT_EQ(text,
            "Pod team-a/llama-0 is running and ready on node gpu-a with ModelRevision "
            "team-a/llama-r2, first staged there from the peer tier.");
}

TEST(PodExplanationTest, EventsOfAnEarlierPodWithTheSameNameAreIgnored) {
  const std::string text = Explain(
      {.pod = testing::GatedPod(),
       .events = {testing::PodEvent("Old", "from before", "2026-01-01T11:59:00Z", "other-uid")}});
  EXPECT_EQ(text.find("from before"), std::string::npos) << text;
}

TEST(PodExplanationTest, APodWithoutTheAnnotationIsNotModelplanes) {
  json pod = testing::Pod("plain", "");
  pod["spec"]["schedulingGates"] = json::array({{{"name", "modelplane.io/weights"}}});
  const std::string text = Explain({.pod = pod});
  EXPECT_NE(text.find("It names no ModelRevision (no modelplane.io/revision annotation)."),
            std::string::npos)
      << text;
}

TEST(PodExplanationTest, FinishedAndDeletedPods) {
  json pod = testing::Pod();
  pod["status"]["phase"] = "Succeeded";
  EXPECT_NE(Explain({.pod = pod}).find("has finished (phase Succeeded)"), std::string::npos);
  pod = testing::Pod();
  pod["metadata"]["deletionTimestamp"] = "2026-01-01T11:59:00Z";
  EXPECT_NE(Explain({.pod = pod}).find("is being deleted (for 60s)"), std::string::npos);
}

TEST(PodExplanationTest, TheAnnotationIsReadInThePodsNamespace) {
  auto reference = PodRevision(testing::Pod());
  ASSERT_TRUE(reference && *reference);
  EXPECT_EQ((*reference)->namespace_name, "team-a");
  EXPECT_EQ((*reference)->name, "llama-r2");
  EXPECT_FALSE(PodRevision(testing::Pod("p", "Not A Name")));
}

}  // namespace
}  // namespace modelplane::cli
