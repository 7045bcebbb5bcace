#include "operator/gating/gate_patch.h"

#include <algorithm>
#include <map>

#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using nlohmann::json;

json GatedPod(json affinity = nullptr) {
  json pod = {
      {"metadata", {{"name", "llama-0"}, {"namespace", "models"}, {"resourceVersion", "42"}}},
      {"spec",
       {{"schedulingGates",
         json::array({{{"name", "example.com/quota"}}, {{"name", "modelplane.io/weights"}}})},
        {"containers", json::array({{{"name", "server"}}})}}}};
  if (!affinity.is_null()) pod["spec"]["affinity"] = std::move(affinity);
  return pod;
}

NodeFacts Node(const std::string& name) {
  return {.name = name, .labels = {{"kubernetes.io/hostname", name + ".example"}}};
}

TEST(GatePatchTest, APodWithoutAffinityGetsOneTermPerNode) {
  auto patch = UngatePatch(GatedPod(), {Node("gpu-0"), Node("gpu-2")});
  ASSERT_TRUE(patch) << patch.error().ToString();
  const json patched = GatedPod().patch(*patch);
  EXPECT_EQ(patched["metadata"]["resourceVersion"], "42");
  const json& terms =
      patched["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
             ["nodeSelectorTerms"];
  ASSERT_EQ(terms.size(), 2u);
  EXPECT_EQ(terms[0], json::parse(R"({"matchFields":[{"key":"metadata.name","operator":"In",
                                      "values":["gpu-0"]}]})"));
  EXPECT_EQ(terms[1]["matchFields"][0]["values"], json::array({"gpu-2"}));
  EXPECT_EQ(patched["spec"]["schedulingGates"], json::array({{{"name", "example.com/quota"}}}))
      << "only modelplane's gate goes";
}

TEST(GatePatchTest, ExistingTermsAreEachNarrowedByHostname) {
  const json affinity = json::parse(R"({
    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []},
    "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
      {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["h200"]}]},
      {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-9"]}]}]}}})");
  auto patch = UngatePatch(GatedPod(affinity), {Node("gpu-0"), Node("gpu-2")});
  ASSERT_TRUE(patch) << patch.error().ToString();
  const json patched = GatedPod(affinity).patch(*patch);
  const json& terms =
      patched["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
             ["nodeSelectorTerms"];
  ASSERT_EQ(terms.size(), 2u) << "terms may not be added to a non-empty list";
  const json hostnames = {{"key", "kubernetes.io/hostname"},
                          {"operator", "In"},
                          {"values", {"gpu-0.example", "gpu-2.example"}}};
  ASSERT_EQ(terms[0]["matchExpressions"].size(), 2u);
  EXPECT_EQ(terms[0]["matchExpressions"][0]["key"], "gpu") << "existing requirements stay";
  EXPECT_EQ(terms[0]["matchExpressions"][1], hostnames);
  EXPECT_EQ(terms[1]["matchExpressions"], json::array({hostnames}));
  EXPECT_EQ(terms[1]["matchFields"][0]["values"], json::array({"gpu-9"}));
  EXPECT_TRUE(patched["spec"]["affinity"].contains("podAntiAffinity"));
}

TEST(GatePatchTest, AffinityWithoutNodeAffinity) {
  const json affinity = {{"podAntiAffinity", json::object()}};
  auto patch = UngatePatch(GatedPod(affinity), {Node("gpu-1")});
  ASSERT_TRUE(patch);
  const json patched = GatedPod(affinity).patch(*patch);
  EXPECT_TRUE(patched["spec"]["affinity"].contains("podAntiAffinity"));
  EXPECT_EQ(patched["spec"]["affinity"]["nodeAffinity"]
                   ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
                       .size(),
            1u);
}

TEST(GatePatchTest, TheGateIsGuardedAndTheVersionIsAPrecondition) {
  auto patch = UngatePatch(GatedPod(), {Node("gpu-0")});
  ASSERT_TRUE(patch);
  const json& operations = *patch;
  EXPECT_EQ(operations.front(), json::parse(R"({"op":"replace","path":"/metadata/resourceVersion",
                                                "value":"42"})"));
  EXPECT_EQ(operations[operations.size() - 2],
            json::parse(R"({"op":"test","path":"/spec/schedulingGates/1/name",
                            "value":"modelplane.io/weights"})"));
  EXPECT_EQ(operations.back(), json::parse(R"({"op":"remove","path":"/spec/schedulingGates/1"})"));
}

TEST(GatePatchTest, TheRevisionDigestIsWrittenWhereThePodSaysOtherwise) {
  const std::string digest_text = "sha256:" + std::string(64, 'a');
  const std::map<std::string, std::string> digest = {
      {"modelplane.io/revision-digest", digest_text}};
  json pod = GatedPod();
  pod["metadata"]["annotations"] = {{"modelplane.io/revision", "llama-r1"}};
  auto patch = UngatePatch(pod, {Node("gpu-0")}, digest);
  ASSERT_TRUE(patch);
  const json write = {{"op", "add"},
                      {"path", "/metadata/annotations/modelplane.io~1revision-digest"},
                      {"value", digest_text}};
  EXPECT_NE(std::find(patch->begin(), patch->end(), write), patch->end()) << patch->dump();

  pod["metadata"]["annotations"]["modelplane.io/revision-digest"] = digest_text;
  patch = UngatePatch(pod, {Node("gpu-0")}, digest);
  ASSERT_TRUE(patch);
  EXPECT_EQ(patch->dump().find("revision-digest"), std::string::npos) << "already right";

  // A pod seen without annotations (never a serving pod) gets none: an added map would replace
  // whatever the pod has.
  patch = UngatePatch(GatedPod(), {Node("gpu-0")}, digest);
  ASSERT_TRUE(patch);
  EXPECT_EQ(patch->dump().find("annotations"), std::string::npos);
}

// A pod admitted before its adapters existed learns their names as it is let go.
TEST(GatePatchTest, TheLoraModulesAreWrittenWhereThePodSaysOtherwise) {
  json pod = GatedPod();
  pod["metadata"]["annotations"] = {{"modelplane.io/revision", "llama-r1"},
                                    {"modelplane.io/adapters", "sql-lora"}};
  const std::string modules = "sql-lora-0123456789ab=/models/adapters/sql-lora";
  auto patch = UngatePatch(pod, {Node("gpu-0")}, {{"modelplane.io/lora-modules", modules}});
  ASSERT_TRUE(patch);
  const json write = {{"op", "add"},
                      {"path", "/metadata/annotations/modelplane.io~1lora-modules"},
                      {"value", modules}};
  EXPECT_NE(std::find(patch->begin(), patch->end(), write), patch->end()) << patch->dump();
  pod["metadata"]["annotations"]["modelplane.io/lora-modules"] = modules;
  patch = UngatePatch(pod, {Node("gpu-0")}, {{"modelplane.io/lora-modules", modules}});
  ASSERT_TRUE(patch);
  EXPECT_EQ(patch->dump().find("lora-modules"), std::string::npos) << "already right";
}

TEST(GatePatchTest, RefusesAPodWithoutTheGateOrNodes) {
  json ungated = GatedPod();
  ungated["spec"]["schedulingGates"] = json::array({{{"name", "example.com/quota"}}});
  EXPECT_FALSE(UngatePatch(ungated, {Node("gpu-0")}));
  EXPECT_FALSE(UngatePatch(GatedPod(), {}));
  const json affinity =
      json::parse(R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]}}})");
  auto unlabelled = UngatePatch(GatedPod(affinity), {NodeFacts{.name = "bare"}});
  ASSERT_FALSE(unlabelled);
  EXPECT_NE(unlabelled.error().message().find("kubernetes.io/hostname"), std::string::npos);
}

TEST(GatePatchTest, NodesAdmittedByANarrowedPod) {
  PodFacts pod;
  pod.required_terms = {{.field_requirements = {{"metadata.name", "In", {"gpu-0"}}}},
                        {.field_requirements = {{"metadata.name", "In", {"gpu-2"}}}}};
  const std::vector<std::string> admitted =
      NodesAdmitted(pod, {Node("gpu-0"), Node("gpu-1"), Node("gpu-2")});
  EXPECT_EQ(admitted, (std::vector<std::string>{"gpu-0", "gpu-2"}));
}

}  // namespace
}  // namespace modelplane::controller
