#include "core/kube/builtin_types.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

using nlohmann::json;

// NOLINTNEXTLINE(cert-err58-cpp): a test constant; a throw before main ends the test anyway
const json kPod = json::parse(R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "server-0", "namespace": "serving", "resourceVersion": "42",
               "annotations": {"modelplane.io/revision": "llama-r1"}},
  "spec": {"nodeName": "gpu-1", "schedulerName": "modelplane-scheduler",
           "schedulingGates": [{"name": "modelplane.io/admission"}],
           "readinessGates": [{"conditionType": "modelplane.io/weights-ready"}],
           "containers": [{"name": "engine", "image": "vllm:1"}]},
  "status": {"phase": "Running",
             "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": "x"}]}
})");

TEST(BuiltinTypesTest, PodReadsWhatControllersUse) {
  auto pod = PodFromJson(kPod);
  ASSERT_TRUE(pod.has_value()) << pod.error().ToString();
  EXPECT_EQ(pod->metadata.name, "server-0");
  EXPECT_EQ(pod->metadata.annotations.at("modelplane.io/revision"), "llama-r1");
  EXPECT_EQ(pod->node_name, "gpu-1");
  EXPECT_EQ(pod->scheduling_gates, std::vector<std::string>{"modelplane.io/admission"});
  EXPECT_EQ(pod->readiness_gates, std::vector<std::string>{"modelplane.io/weights-ready"});
  ASSERT_NE(pod->FindCondition("Ready"), nullptr);
  EXPECT_EQ(pod->FindCondition("Ready")->status, "False");
}

TEST(BuiltinTypesTest, PodWriteBackKeepsWhatTheViewDoesNotModel) {
  auto pod = PodFromJson(kPod);
  ASSERT_TRUE(pod.has_value());
  pod->scheduling_gates.clear();
  pod->conditions.push_back({"modelplane.io/weights-ready", "True", "RevisionVerified", ""});
  const json out = ToJson(*pod);
  EXPECT_EQ(out["spec"]["containers"][0]["image"], "vllm:1");
  EXPECT_FALSE(out["spec"].contains("schedulingGates"));
  ASSERT_EQ(out["status"]["conditions"].size(), 2u);
  EXPECT_EQ(out["status"]["conditions"][0]["lastTransitionTime"], "x");
  EXPECT_EQ(out["status"]["conditions"][1]["status"], "True");
  EXPECT_EQ(out["metadata"]["resourceVersion"], "42");
}

TEST(BuiltinTypesTest, WrongTypesAreErrorsWithTheirPath) {
  json bad = kPod;
  bad["spec"]["nodeName"] = 7;
  auto pod = PodFromJson(bad);
  ASSERT_FALSE(pod.has_value());
  EXPECT_NE(pod.error().message().find("spec.nodeName"), std::string::npos);
  EXPECT_FALSE(PodFromJson(json::array()).has_value());
  EXPECT_FALSE(LeaseFromJson(json{{"spec", {{"leaseDurationSeconds", "15"}}}}).has_value());
}

TEST(BuiltinTypesTest, NodeLeaseAndEvent) {
  auto node = NodeFromJson(json::parse(R"({"metadata": {"name": "gpu-1",
      "labels": {"topology.kubernetes.io/zone": "zone-a"}},
      "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "64"},
                 "conditions": [{"type": "Ready", "status": "True"}]}})"));
  ASSERT_TRUE(node.has_value()) << node.error().ToString();
  EXPECT_TRUE(node->ready);
  EXPECT_EQ(node->allocatable.at("nvidia.com/gpu"), "8");
  EXPECT_EQ(node->metadata.labels.at("topology.kubernetes.io/zone"), "zone-a");

  auto lease = LeaseFromJson(json::parse(R"({"metadata": {"name": "l", "namespace": "n"},
      "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15, "leaseTransitions": 3}})"));
  ASSERT_TRUE(lease.has_value()) << lease.error().ToString();
  EXPECT_EQ(lease->holder_identity, "a");
  EXPECT_EQ(lease->lease_transitions, 3);
  EXPECT_EQ(ToJson(*lease)["spec"]["leaseDurationSeconds"], 15);

  auto event = EventFromJson(json::parse(R"({"metadata": {"name": "e", "namespace": "n"},
      "type": "Warning", "reason": "InvalidSpec", "note": "bad", "series": {"count": 4},
      "regarding": {"kind": "ModelRevision", "name": "r"}})"));
  ASSERT_TRUE(event.has_value()) << event.error().ToString();
  EXPECT_EQ(event->series_count, 4);
  EXPECT_EQ(event->regarding.kind, "ModelRevision");
}

}  // namespace
}  // namespace modelplane::core
