#include "operator/rollouts/workload.h"

#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using nlohmann::json;

json Template(const std::string& revision) {
  json pod_template = {{"metadata", {{"labels", {{"app", "llama"}}}}},
                       {"spec", {{"nodeSelector", {{"gpu", "h200"}}}}}};
  if (!revision.empty()) {
    pod_template["metadata"]["annotations"] = {{"modelplane.io/revision", revision}};
  }
  return pod_template;
}

json DeploymentObject(const std::string& revision, json status) {
  return {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", {{"name", "llama"}, {"namespace", "models"}, {"uid", "d-1"}, {"generation", 4}}},
      {"spec",
       {{"replicas", 4},
        {"strategy", {{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxSurge", 1}}}}},
        {"template", Template(revision)}}},
      {"status", std::move(status)}};
}

json ReplicaSet(int number, const std::string& revision) {
  return {{"metadata",
           {{"name", "llama-" + std::to_string(number)},
            {"annotations", {{"deployment.kubernetes.io/revision", std::to_string(number)}}}}},
          {"spec", {{"template", Template(revision)}}}};
}

TEST(WorkloadTest, ADeploymentMidRollout) {
  const json deployment = DeploymentObject("llama-r2", {{"observedGeneration", 4},
                                                        {"replicas", 5},
                                                        {"updatedReplicas", 1},
                                                        {"availableReplicas", 4}});
  const json r1 = ReplicaSet(1, "llama-r1");
  const json r2 = ReplicaSet(2, "llama-r2");
  const auto workload = ReadDeployment(deployment, {&r2, &r1});
  ASSERT_TRUE(workload);
  EXPECT_EQ(workload->Key(), "Deployment/models/llama");
  EXPECT_EQ(workload->current_revision, "llama-r2");
  EXPECT_EQ(workload->previous_revision, "llama-r1");
  EXPECT_FALSE(workload->complete);
  EXPECT_EQ(workload->max_surge, 1);
  EXPECT_EQ(workload->node_selector.at("gpu"), "h200");
}

TEST(WorkloadTest, CompleteWhenEveryReplicaIsUpdatedAndAvailable) {
  const json done = DeploymentObject("llama-r2", {{"observedGeneration", 4},
                                                  {"replicas", 4},
                                                  {"updatedReplicas", 4},
                                                  {"availableReplicas", 4}});
  EXPECT_TRUE(ReadDeployment(done, {})->complete);
  json stale = done;
  stale["status"]["observedGeneration"] = 3;
  EXPECT_FALSE(ReadDeployment(stale, {})->complete) << "the controller has not seen the change";
}

TEST(WorkloadTest, PreviousSkipsRolloutsThatKeptTheModel) {
  // r1, then r2, then an image-only change that still names r2: undo's model is still r1.
  const json deployment = DeploymentObject("llama-r2", json::object());
  const json one = ReplicaSet(1, "llama-r1");
  const json two = ReplicaSet(2, "llama-r2");
  const json three = ReplicaSet(3, "llama-r2");
  EXPECT_EQ(ReadDeployment(deployment, {&one, &three, &two})->previous_revision, "llama-r1");
  // After an undo to r1 Kubernetes renumbers r1's ReplicaSet as the newest.
  const json undone = DeploymentObject("llama-r1", json::object());
  const json one_again = ReplicaSet(4, "llama-r1");
  EXPECT_EQ(ReadDeployment(undone, {&one_again, &two})->previous_revision, "llama-r2");
}

TEST(WorkloadTest, SurgeDefaultsAndPercentages) {
  json deployment = DeploymentObject("llama-r1", json::object());
  deployment["spec"]["strategy"] = json::object();
  EXPECT_EQ(ReadDeployment(deployment, {})->max_surge, 1) << "25% of 4";
  deployment["spec"]["replicas"] = 10;
  deployment["spec"]["strategy"] = {{"rollingUpdate", {{"maxSurge", "30%"}}}};
  EXPECT_EQ(ReadDeployment(deployment, {})->max_surge, 3);
  deployment["spec"]["strategy"] = {{"type", "Recreate"}};
  EXPECT_EQ(ReadDeployment(deployment, {})->max_surge, 0);
}

TEST(WorkloadTest, AStatefulSetAndItsControllerRevisions) {
  const json set = {{"metadata", {{"name", "llama"}, {"namespace", "models"}, {"generation", 2}}},
                    {"spec", {{"replicas", 3}, {"template", Template("llama-r2")}}},
                    {"status",
                     {{"observedGeneration", 2},
                      {"currentRevision", "llama-6f"},
                      {"updateRevision", "llama-7c"},
                      {"updatedReplicas", 1},
                      {"readyReplicas", 3}}}};
  const json old_revision = {{"metadata", {{"name", "llama-6f"}}},
                             {"revision", 1},
                             {"data", {{"spec", {{"template", Template("llama-r1")}}}}}};
  const json new_revision = {{"metadata", {{"name", "llama-7c"}}},
                             {"revision", 2},
                             {"data", {{"spec", {{"template", Template("llama-r2")}}}}}};
  const auto workload = ReadStatefulSet(set, {&old_revision, &new_revision});
  ASSERT_TRUE(workload);
  EXPECT_EQ(workload->kind, "StatefulSet");
  EXPECT_EQ(workload->current_revision, "llama-r2");
  EXPECT_EQ(workload->previous_revision, "llama-r1");
  EXPECT_FALSE(workload->complete);
  EXPECT_EQ(workload->max_surge, 0);
}

TEST(WorkloadTest, TemplateRevisionIsInTheWorkloadsNamespaceOnly) {
  EXPECT_EQ(TemplateRevision(Template("llama-r1"), "models"), "llama-r1");
  EXPECT_EQ(TemplateRevision(Template("models/llama-r1"), "models"), "llama-r1");
  EXPECT_EQ(TemplateRevision(Template("other/llama-r1"), "models"), "");
  EXPECT_EQ(TemplateRevision(Template(""), "models"), "");
  EXPECT_EQ(TemplateRevision(Template("Not A Name"), "models"), "");
}

TEST(WorkloadTest, TrimKeepsWhatWorkloadsRead) {
  json deployment = DeploymentObject("llama-r2", {{"observedGeneration", 4},
                                                  {"replicas", 4},
                                                  {"updatedReplicas", 4},
                                                  {"availableReplicas", 4},
                                                  {"conditions", json::array()}});
  deployment["spec"]["template"]["spec"]["containers"] = json::array({{{"name", "server"}}});
  deployment["metadata"]["managedFields"] = json::array({{{"manager", "kubectl"}}});
  const json trimmed = TrimWorkload(deployment);
  EXPECT_FALSE(trimmed["metadata"].contains("managedFields"));
  EXPECT_FALSE(trimmed["spec"]["template"]["spec"].contains("containers"));
  EXPECT_FALSE(trimmed["status"].contains("conditions"));
  const json one = ReplicaSet(1, "llama-r1");
  const json trimmed_set = TrimWorkload(one);
  EXPECT_EQ(*ReadDeployment(TrimWorkload(deployment), {&trimmed_set}),
            *ReadDeployment(deployment, {&one}));
}

}  // namespace
}  // namespace modelplane::controller
