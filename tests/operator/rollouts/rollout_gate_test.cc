#include "operator/rollouts/rollout_gate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json Deployment(int replicas, const std::string& revision) {
  json template_metadata = {{"labels", {{"app", "podinfo"}}}};
  if (!revision.empty()) template_metadata["annotations"] = {{"modelplane.io/revision", revision}};
  return {{"metadata", {{"name", "podinfo"}, {"namespace", "test"}}},
          {"spec", {{"replicas", replicas}, {"template", {{"metadata", template_metadata}}}}}};
}

json Revision(int ready, bool revoked = false) {
  return {{"metadata", {{"name", "llama-r2"}, {"namespace", "test"}}},
          {"spec", {{"revoked", revoked}}},
          {"status", {{"readyNodes", ready}, {"stagingNodes", 1}}}};
}

json Pod(bool weights_ready, const std::string& revision = "llama-r2") {
  return {{"metadata", {{"annotations", {{"modelplane.io/revision", revision}}}}},
          {"status",
           {{"conditions", json::array({{{"type", "modelplane.io/weights-ready"},
                                         {"status", weights_ready ? "True" : "False"}}})}}}};
}

GateFacts Facts(json deployment, json revision) {
  return {.namespace_name = "test",
          .target = "podinfo",
          .deployment = std::move(deployment),
          .revision = std::move(revision)};
}

TEST(RolloutGateTest, HooksByName) {
  EXPECT_EQ(RolloutHookFromPath("confirm-rollout"), RolloutHook::kConfirmRollout);
  EXPECT_EQ(RolloutHookFromPath("confirm-promotion"), RolloutHook::kConfirmPromotion);
  EXPECT_EQ(RolloutHookFromPath("confirm-traffic-increase"), RolloutHook::kConfirmTrafficIncrease);
  EXPECT_FALSE(RolloutHookFromPath("pre-rollout"));
}

TEST(RolloutGateTest, ConfirmRolloutWaitsForAsManyReadyNodesAsTheCanaryHasPods) {
  GateAnswer answer =
      DecideGate(RolloutHook::kConfirmRollout, Facts(Deployment(2, "llama-r2"), Revision(1)));
  EXPECT_FALSE(answer.allowed);
  EXPECT_THAT(answer.reason, HasSubstr("test/llama-r2 is Ready on 1 node; the canary needs 2"));
  answer = DecideGate(RolloutHook::kConfirmRollout, Facts(Deployment(2, "llama-r2"), Revision(2)));
  EXPECT_TRUE(answer.allowed) << answer.reason;
  GateFacts scaled_down = Facts(Deployment(0, "llama-r2"), Revision(0));
  EXPECT_THAT(DecideGate(RolloutHook::kConfirmRollout, scaled_down).reason, HasSubstr("needs 1"))
      << "a canary scaled to zero still needs one node";
  scaled_down.nodes_override = 3;
  EXPECT_THAT(DecideGate(RolloutHook::kConfirmRollout, scaled_down).reason, HasSubstr("needs 3"));
}

TEST(RolloutGateTest, ConfirmPromotionCountsThePrimarysReplicas) {
  GateFacts facts = Facts(Deployment(1, "llama-r2"), Revision(2));
  facts.primary = Deployment(4, "llama-r1");
  const GateAnswer answer = DecideGate(RolloutHook::kConfirmPromotion, facts);
  EXPECT_FALSE(answer.allowed);
  EXPECT_THAT(answer.reason, HasSubstr("promoting the primary needs 4"));
}

TEST(RolloutGateTest, ConfirmTrafficIncreaseWantsEveryCanaryPodVerified) {
  GateFacts facts = Facts(Deployment(2, "llama-r2"), Revision(2));
  facts.pods = {Pod(true), Pod(false), Pod(false, "llama-r1")};
  GateAnswer answer = DecideGate(RolloutHook::kConfirmTrafficIncrease, facts);
  EXPECT_FALSE(answer.allowed);
  EXPECT_THAT(answer.reason, HasSubstr("1 of 2 canary pods"));
  facts.pods = {Pod(true), Pod(true)};
  EXPECT_TRUE(DecideGate(RolloutHook::kConfirmTrafficIncrease, facts).allowed);
  facts.pods.clear();
  EXPECT_FALSE(DecideGate(RolloutHook::kConfirmTrafficIncrease, facts).allowed)
      << "no canary pod yet is not a yes";
}

TEST(RolloutGateTest, WhatIsMissingOrRevokedHolds) {
  EXPECT_THAT(DecideGate(RolloutHook::kConfirmRollout, Facts(json(), json())).reason,
              HasSubstr("Deployment test/podinfo does not exist"));
  EXPECT_THAT(
      DecideGate(RolloutHook::kConfirmRollout, Facts(Deployment(1, "llama-r2"), json())).reason,
      HasSubstr("does not exist"));
  const GateAnswer revoked =
      DecideGate(RolloutHook::kConfirmRollout, Facts(Deployment(1, "llama-r2"), Revision(4, true)));
  EXPECT_FALSE(revoked.allowed);
  EXPECT_THAT(revoked.reason, HasSubstr("revoked"));
  const GateAnswer unmanaged =
      DecideGate(RolloutHook::kConfirmRollout, Facts(Deployment(1, ""), json()));
  EXPECT_TRUE(unmanaged.allowed) << "no revision, nothing to wait for";
}

}  // namespace
}  // namespace modelplane::controller
