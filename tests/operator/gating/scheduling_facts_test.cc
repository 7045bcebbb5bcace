#include "operator/gating/scheduling_facts.h"

#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using nlohmann::json;

json Pod(json spec, json labels = json::object()) {
  return {{"metadata", {{"name", "p"}, {"namespace", "models"}, {"labels", labels}}},
          {"spec", std::move(spec)}};
}

json NodeJson(const std::string& name, json labels = json::object(),
              json extra_spec = json::object()) {
  json node = {{"metadata", {{"name", name}, {"labels", labels}}},
               {"spec", extra_spec},
               {"status",
                {{"allocatable",
                  {{"cpu", "8"}, {"memory", "64Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}},
                 {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
  return node;
}

TEST(SchedulingFactsTest, RequestsAddContainersSidecarsAndOverhead) {
  const PodFacts pod = ReadPodFacts(Pod({
      {"containers", json::array({{{"name", "a"},
                                   {"resources",
                                    {{"requests", {{"cpu", "500m"}, {"memory", "1Gi"}}},
                                     {"limits", {{"nvidia.com/gpu", "2"}}}}}},
                                  {{"name", "b"}, {"resources", {{"requests", {{"cpu", "1"}}}}}}})},
      {"initContainers",
       json::array({{{"name", "sidecar"},
                     {"restartPolicy", "Always"},
                     {"resources", {{"requests", {{"cpu", "250m"}}}}}},
                    {{"name", "download"}, {"resources", {{"requests", {{"cpu", "4"}}}}}}})},
      {"overhead", {{"cpu", "100m"}}},
  }));
  // containers 1.5 + sidecar 0.25 = 1.75; the init step needs 4 + 0.25: the larger wins.
  EXPECT_EQ(pod.requests.at("cpu"), 4250 + 100);
  EXPECT_EQ(pod.requests.at("memory"), 1024LL * 1024 * 1024 * 1000);
  EXPECT_EQ(pod.requests.at("nvidia.com/gpu"), 2000) << "limits stand in for missing requests";
  EXPECT_EQ(pod.requests.at("pods"), 1000);
}

TEST(SchedulingFactsTest, NodeSelectorAffinityAndTaints) {
  const auto gpu_a =
      ReadNodeFacts(NodeJson("gpu-a", {{"zone", "a"}, {"gpu", "h200"}, {"rank", "7"}}));
  ASSERT_TRUE(gpu_a);
  EXPECT_TRUE(gpu_a->ready);

  PodFacts pod = ReadPodFacts(Pod({{"nodeSelector", {{"gpu", "h200"}}}}));
  EXPECT_FALSE(StaticMismatch(pod, *gpu_a));
  pod.node_selector["gpu"] = "a100";
  EXPECT_TRUE(StaticMismatch(pod, *gpu_a));

  pod = ReadPodFacts(Pod(
      {{"affinity",
        {{"nodeAffinity",
          {{"requiredDuringSchedulingIgnoredDuringExecution",
            {{"nodeSelectorTerms",
              json::array(
                  {{{"matchExpressions",
                     json::array({{{"key", "zone"}, {"operator", "In"}, {"values", {"b"}}}})}},
                   {{"matchExpressions",
                     json::array(
                         {{{"key", "rank"}, {"operator", "Gt"}, {"values", {"5"}}}})}}})}}}}}}}}));
  EXPECT_FALSE(StaticMismatch(pod, *gpu_a)) << "the second term matches (rank 7 > 5)";
  pod.required_terms[1].label_requirements[0].values = {"9"};
  EXPECT_TRUE(StaticMismatch(pod, *gpu_a));
  pod.required_terms = {{.field_requirements = {{"metadata.name", "In", {"gpu-a"}}}}};
  EXPECT_FALSE(StaticMismatch(pod, *gpu_a));
  pod.required_terms = {{}};
  EXPECT_TRUE(StaticMismatch(pod, *gpu_a)) << "an empty term selects no node";

  const auto tainted = ReadNodeFacts(NodeJson(
      "gpu-b", {},
      {{"taints",
        json::array(
            {{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}})}}));
  PodFacts plain = ReadPodFacts(Pod(json::object()));
  EXPECT_TRUE(StaticMismatch(plain, *tainted));
  plain.tolerations = {{.key = "nvidia.com/gpu", .op = "Exists"}};
  EXPECT_FALSE(StaticMismatch(plain, *tainted));
  plain.tolerations = {{.key = "nvidia.com/gpu", .op = "Equal", .value = "absent"}};
  EXPECT_TRUE(StaticMismatch(plain, *tainted));
  plain.tolerations = {{.op = "Exists"}};
  EXPECT_FALSE(StaticMismatch(plain, *tainted)) << "an empty key with Exists tolerates all";

  const auto cordoned = ReadNodeFacts(NodeJson("gpu-c", {}, {{"unschedulable", true}}));
  EXPECT_EQ(StaticMismatch(ReadPodFacts(Pod(json::object())), *cordoned).value_or(""), "cordoned");

  json not_ready = NodeJson("gpu-d");
  not_ready["status"]["conditions"][0]["status"] = "False";
  EXPECT_EQ(
      StaticMismatch(ReadPodFacts(Pod(json::object())), *ReadNodeFacts(not_ready)).value_or(""),
      "not Ready");
}

TEST(SchedulingFactsTest, HostAntiAffinityBothWays) {
  const json anti = {{"affinity",
                      {{"podAntiAffinity",
                        {{"requiredDuringSchedulingIgnoredDuringExecution",
                          json::array({{{"labelSelector", {{"matchLabels", {{"app", "llama"}}}}},
                                        {"topologyKey", "kubernetes.io/hostname"}}})}}}}}};
  const PodFacts incoming = ReadPodFacts(Pod(anti, {{"app", "llama"}}));
  const PodFacts same_app = ReadPodFacts(Pod(json::object(), {{"app", "llama"}}));
  const PodFacts other_app = ReadPodFacts(Pod(json::object(), {{"app", "web"}}));
  EXPECT_TRUE(AntiAffinityConflict(incoming, same_app));
  EXPECT_TRUE(AntiAffinityConflict(same_app, incoming)) << "a resident's term repels too";
  EXPECT_FALSE(AntiAffinityConflict(incoming, other_app));

  json elsewhere = Pod(json::object(), {{"app", "llama"}});
  elsewhere["metadata"]["namespace"] = "other";
  EXPECT_FALSE(AntiAffinityConflict(incoming, ReadPodFacts(elsewhere)))
      << "a term without namespaces covers the pod's own namespace only";

  json zone_anti = anti;
  zone_anti["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
           ["topologyKey"] = "topology.kubernetes.io/zone";
  EXPECT_TRUE(ReadPodFacts(Pod(zone_anti)).host_anti_affinity.empty());
}

TEST(SchedulingFactsTest, LabelSelectors) {
  LabelSelector selector{.match_labels = {{"app", "llama"}},
                         .requirements = {{"tier", "NotIn", {"test"}}, {"team", "Exists", {}}}};
  EXPECT_TRUE(Matches(selector, {{"app", "llama"}, {"team", "ml"}}));
  EXPECT_FALSE(Matches(selector, {{"app", "llama"}, {"team", "ml"}, {"tier", "test"}}));
  EXPECT_FALSE(Matches(selector, {{"app", "llama"}}));
  EXPECT_TRUE(Matches(LabelSelector{}, {})) << "an empty selector selects everything";
  EXPECT_FALSE(Matches(LabelSelector{.matches_nothing = true}, {{"app", "llama"}}));
}

}  // namespace
}  // namespace modelplane::controller
