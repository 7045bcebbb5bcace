#include "node-agent/controller/pod_verdicts.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

core::Pod GatedPodOf(const std::string& name, const std::string& revision, bool weights_ready) {
  core::Pod pod;
  pod.metadata.name = name;
  pod.metadata.namespace_name = "serving";
  pod.metadata.annotations["modelplane.io/revision"] = revision;
  pod.readiness_gates = {"modelplane.io/weights-ready"};
  if (weights_ready) {
    pod.conditions.push_back({.type = "modelplane.io/weights-ready", .status = "True"});
  }
  return pod;
}

// NOLINTBEGIN(cert-err58-cpp): test constants; an allocation failure here ends the test.
const std::string kDigestA = "sha256:" + std::string(64, 'a');
const std::string kDigestB = "sha256:" + std::string(64, 'b');
// NOLINTEND(cert-err58-cpp)

TEST(PodVerdictsTest, AWaitingPodGoesReadyWithTheTierThatServedItsRevision) {
  const std::vector<core::Pod> pods = {GatedPodOf("waiting", "r1", false),
                                       GatedPodOf("still-waiting", "r2", false)};
  WeightsVerdicts weights;
  weights.ready["serving/r1"] = kDigestA;
  weights.unverified["serving/r2"] = kDigestB;
  const std::vector<PodVerdict> verdicts = PlanPodVerdicts(
      pods, weights,
      {{.digest = kDigestB, .source_tier = "origin"}, {.digest = kDigestA, .source_tier = "peer"}});
  ASSERT_EQ(verdicts.size(), 1U) << "a pod still waiting is left as it is";
  EXPECT_EQ(verdicts[0].pod, &pods[0]);
  EXPECT_TRUE(verdicts[0].weights_ready);
  EXPECT_EQ(verdicts[0].digest, kDigestA);
  EXPECT_EQ(verdicts[0].tier, "peer");
}

TEST(PodVerdictsTest, AReadyPodGoesBackWhenItsRevisionIsRevokedOrNoLongerVerified) {
  const std::vector<core::Pod> pods = {GatedPodOf("revoked", "r1", true),
                                       GatedPodOf("lost", "r2", true),
                                       GatedPodOf("fine", "r3", true)};
  WeightsVerdicts weights;
  weights.revoked["serving/r1"] = kDigestA;
  weights.unverified["serving/r2"] = kDigestB;
  weights.ready["serving/r3"] = kDigestA;
  const std::vector<PodVerdict> verdicts = PlanPodVerdicts(pods, weights, {});
  ASSERT_EQ(verdicts.size(), 2U) << "a Ready pod whose revision is verified is not patched again";
  EXPECT_FALSE(verdicts[0].weights_ready);
  EXPECT_EQ(verdicts[0].reason, kReasonRevisionRevoked);
  EXPECT_EQ(verdicts[0].message, "revision serving/r1 (" + kDigestA + ") is revoked");
  EXPECT_FALSE(verdicts[1].weights_ready);
  EXPECT_EQ(verdicts[1].reason, kReasonWeightsNotVerified);
}

TEST(PodVerdictsTest, APodNamingAnotherNamespaceGetsNoVerdict) {
  const std::vector<core::Pod> pods = {GatedPodOf("borrower", "models/r1", false)};
  WeightsVerdicts weights;
  weights.ready["models/r1"] = kDigestA;
  EXPECT_TRUE(PlanPodVerdicts(pods, weights, {}).empty());
}

}  // namespace
}  // namespace modelplane::agent
