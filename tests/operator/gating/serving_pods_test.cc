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

}  // namespace
}  // namespace modelplane::controller
