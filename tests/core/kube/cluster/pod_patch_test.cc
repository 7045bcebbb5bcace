// The two pod patches the operator and the node agent depend on, against the real API server,
// the real kube-scheduler and KWOK nodes: removing one scheduling gate with a JSON patch that
// guards itself with a "test" op, and setting a readiness-gate condition through pods/status
// with a strategic merge patch. Also the event recorder's de-duplication.
#include <gtest/gtest.h>

#include "core/kube/event_recorder.h"
#include "tests/core/kube/cluster/cluster_fixture.h"

namespace modelplane::core::testing {
namespace {

using nlohmann::json;

using PodPatchTest = ClusterTest;

json GatedPod(const std::string& ns, const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec",
           {{"schedulingGates",
             {{{"name", "modelplane.io/admission"}}, {{"name", "example.com/other"}}}},
            {"readinessGates", {{{"conditionType", "modelplane.io/weights-ready"}}}},
            {"tolerations",
             {{{"key", "kwok.x-k8s.io/node"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}}},
            {"containers", {{{"name", "server"}, {"image", "example.com/serving:1"}}}}}}};
}

std::string KubectlGetPod(const std::string& kubeconfig, const std::string& ns,
                          const std::string& name) {
  std::string output;
  RunCommand(
      "kubectl --kubeconfig=" + kubeconfig + " -n " + ns + " get pod " + name + " -o wide 2>&1",
      &output);
  return output;
}

TEST_F(PodPatchTest, RemoveOneSchedulingGateThenSetReadinessCondition) {
  auto created = client_->Create(resources::Pods(), namespace_, GatedPod(namespace_, "server"));
  ASSERT_TRUE(created.has_value()) << created.error().ToString();
  EXPECT_NE(KubectlGetPod(kubeconfig_path_, namespace_, "server").find("SchedulingGated"),
            std::string::npos);

  // The test op makes the removal safe against someone reordering the gates meanwhile.
  const json wrong_guard = json::array(
      {{{"op", "test"}, {"path", "/spec/schedulingGates/0/name"}, {"value", "someone/else"}},
       {{"op", "remove"}, {"path", "/spec/schedulingGates/0"}}});
  auto refused =
      client_->Patch(resources::Pods(), namespace_, "server", PatchType::kJson, wrong_guard);
  ASSERT_FALSE(refused.has_value()) << "a failing test op must reject the whole patch";

  const json remove_ours = json::array({{{"op", "test"},
                                         {"path", "/spec/schedulingGates/0/name"},
                                         {"value", "modelplane.io/admission"}},
                                        {{"op", "remove"}, {"path", "/spec/schedulingGates/0"}}});
  auto ungated =
      client_->Patch(resources::Pods(), namespace_, "server", PatchType::kJson, remove_ours);
  ASSERT_TRUE(ungated.has_value()) << ungated.error().ToString();
  ASSERT_EQ((*ungated)["spec"]["schedulingGates"].size(), 1u);
  EXPECT_EQ((*ungated)["spec"]["schedulingGates"][0]["name"], "example.com/other");
  // kube-scheduler has had its chance once it binds a pod created after the patch: it saw the
  // patch first (one watch, in order), and the pod it binds is as schedulable as this one would
  // be without its gates.
  json witness = GatedPod(namespace_, "witness");
  witness["spec"].erase("schedulingGates");
  ASSERT_TRUE(client_->Create(resources::Pods(), namespace_, witness));
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto pod = client_->Get(resources::Pods(), namespace_, "witness");
        return pod && pod->at("spec").contains("nodeName");
      },
      std::chrono::seconds(60)))
      << KubectlGetPod(kubeconfig_path_, namespace_, "witness");
  auto still_gated = client_->Get(resources::Pods(), namespace_, "server");
  ASSERT_TRUE(still_gated.has_value());
  EXPECT_FALSE((*still_gated)["spec"].contains("nodeName")) << "one gate is left";

  ASSERT_TRUE(client_->Patch(resources::Pods(), namespace_, "server", PatchType::kJson,
                             json::array({{{"op", "remove"}, {"path", "/spec/schedulingGates"}}})));
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto pod = client_->Get(resources::Pods(), namespace_, "server");
        return pod && pod->value("status", json::object()).value("phase", "") == "Running";
      },
      std::chrono::seconds(60)))
      << KubectlGetPod(kubeconfig_path_, namespace_, "server");

  const json condition = {{"status",
                           {{"conditions",
                             {{{"type", "modelplane.io/weights-ready"},
                               {"status", "True"},
                               {"reason", "RevisionVerified"},
                               {"message", "revision verified on node"}}}}}}};
  auto ready = client_->Patch(resources::Pods(), namespace_, "server", PatchType::kStrategicMerge,
                              condition, {.subresource = "status"});
  ASSERT_TRUE(ready.has_value()) << ready.error().ToString();
  bool has_condition = false;
  for (const auto& entry : (*ready)["status"]["conditions"]) {
    if (entry["type"] == "modelplane.io/weights-ready" && entry["status"] == "True") {
      has_condition = true;
    }
  }
  EXPECT_TRUE(has_condition);
  EXPECT_GT((*ready)["status"]["conditions"].size(), 1u)
      << "a strategic merge keeps the other conditions (merge key: type)";
  // kubectl's READINESS GATES column counts the gates whose condition is True.
  EXPECT_NE(KubectlGetPod(kubeconfig_path_, namespace_, "server").find("1/1"), std::string::npos)
      << KubectlGetPod(kubeconfig_path_, namespace_, "server");
}

TEST_F(PodPatchTest, EventRecorderDeduplicatesRepeats) {
  auto created = client_->Create(resources::ConfigMaps(), namespace_,
                                 ConfigMap(namespace_, "subject", {{"a", "1"}}));
  ASSERT_TRUE(created.has_value());
  EventRecorder recorder(
      *client_, {.reporting_controller = "modelplane.io/test", .reporting_instance = "test-1"},
      clock_);
  auto first = recorder.Record(*created, "Warning", "InvalidSpec", "Validate", "bad sha256");
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  for (int i = 0; i < 4; ++i) {
    auto again = recorder.Record(*created, "Warning", "InvalidSpec", "Validate", "bad sha256");
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(*again, *first);
  }
  auto other = recorder.Record(*created, "Normal", "Staged", "Stage", "ready");
  ASSERT_TRUE(other.has_value());
  EXPECT_NE(*other, *first);
  auto events = client_->ListAll(resources::Events(), namespace_, {});
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->items.size(), 2u);
  for (const auto& event : events->items) {
    if (event["metadata"]["name"] == *first) {
      EXPECT_EQ(event["series"]["count"], 5);
      EXPECT_EQ(event["regarding"]["name"], "subject");
    }
  }
}

}  // namespace
}  // namespace modelplane::core::testing
