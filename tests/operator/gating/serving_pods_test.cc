#include "operator/gating/serving_pods.h"

#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using nlohmann::json;

json GatedPod(const std::string& ns, const std::string& revision) {
  return {{"metadata",
           {{"namespace", ns},
            {"name", "server-0"},
            {"annotations", {{"modelplane.io/revision", revision}}}}},
          {"spec", {{"schedulingGates", {{{"name", "modelplane.io/weights"}}}}}}};
}

TEST(ServingPodsTest, APodIndexesUnderARevisionOfItsOwnNamespace) {
  EXPECT_EQ(RevisionKeyOfPod(GatedPod("serving", "llama-r1")), "serving/llama-r1");
  EXPECT_EQ(RevisionKeyOfPod(GatedPod("serving", "serving/llama-r1")), "serving/llama-r1");
  const json pod = GatedPod("serving", "llama-r1");
  ASSERT_TRUE(HasWeightsGate(pod));
  EXPECT_EQ(GatedPodsByRevisionIndex()(pod), std::vector<std::string>{"serving/llama-r1"});
}

// An annotation edited after admission to name another namespace's revision must not make the
// operator stage that revision for the pod, hand its node that namespace's Secret or release
// the pod onto that revision's nodes: the pod is indexed under no revision at all.
TEST(ServingPodsTest, APodNamingAnotherNamespacesRevisionIsIndexedUnderNone) {
  const json pod = GatedPod("serving", "models/llama-r1");
  EXPECT_EQ(RevisionKeyOfPod(pod), std::nullopt);
  EXPECT_TRUE(GatedPodsByRevisionIndex()(pod).empty());
  EXPECT_TRUE(PodsByRevisionIndex()(pod).empty());
}

// A gated pod waits for its adapters in its revision's pass: what changes an adapter wakes that
// revision.
TEST(ServingPodsTest, GatedPodsAreFoundByTheAdaptersTheyWaitFor) {
  json pod = GatedPod("serving", "llama-r1");
  pod["metadata"]["annotations"]["modelplane.io/adapters"] = "sql-lora, chat-lora";
  EXPECT_EQ(GatedPodsByAdapterIndex()(pod),
            (std::vector<std::string>{"serving/sql-lora", "serving/chat-lora"}));
  core::ObjectStore pods;
  pods.AddIndexer(kGatedPodsByAdapter, GatedPodsByAdapterIndex());
  pods.Upsert(std::make_shared<const json>(pod));
  EXPECT_EQ(RevisionsWaitingForAdapters(pods, {"serving/chat-lora", "serving/other"}),
            std::vector<std::string>{"serving/llama-r1"});

  json foreign = pod;
  foreign["metadata"]["annotations"]["modelplane.io/adapters"] = "models/sql-lora";
  EXPECT_TRUE(GatedPodsByAdapterIndex()(foreign).empty()) << "behind the namespace wall";
  json let_go = pod;
  let_go["spec"]["schedulingGates"] = json::array();
  EXPECT_TRUE(GatedPodsByAdapterIndex()(let_go).empty());
}

}  // namespace
}  // namespace modelplane::controller
