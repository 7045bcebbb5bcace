// LoRA adapters on the serving path, against the real kube-apiserver calling the real
// modelplane-operator (webhook_cluster_fixture.h): a pod naming adapters gets a read-only volume
// for each, mounted beside the base, and the names its engine serves them under; adapters that
// cannot serve the base are refused at admission; a pod admitted before its adapter existed
// waits, told why, is not let go where the base is Ready without the adapter, and goes where
// both are, learning the adapters' names as it is let go.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/api/serving_pod.h"
#include "tests/operator/webhook/cluster/webhook_cluster_fixture.h"

namespace modelplane::controller {
namespace {

using core::testing::WaitUntil;
using nlohmann::json;
using ::testing::HasSubstr;
using webhook_testing::kWait;
using webhook_testing::ReadFile;
using webhook_testing::Revision;
using webhook_testing::ServingPod;

// A LoRA adapter of the revision whose digest is `base_digest` (its own file, so its own digest).
json AdapterRevision(const std::string& ns, const std::string& name,
                     const std::string& base_digest) {
  json adapter = Revision(ns, name);
  adapter["spec"]["files"] = json::array({{{"path", "adapter_model.safetensors"},
                                           {"size", 64},
                                           {"sha256", "sha256:" + std::string(64, 'a')},
                                           {"role", "adapter"}}});
  adapter["spec"]["base"] = {{"digest", base_digest}, {"name", "llama-r1"}};
  return adapter;
}

json PodWithAdapters(const std::string& ns, const std::string& name, const std::string& adapters) {
  json pod = ServingPod(ns, name, "llama-r1");
  pod["metadata"]["annotations"]["modelplane.io/adapters"] = adapters;
  return pod;
}

json Named(const json& list, const std::string& name) {
  for (const json& item : list) {
    if (item.value("name", "") == name) return item;
  }
  return json();
}

class AdaptersClusterTest : public webhook_testing::WebhookClusterTest {
 protected:
  // The revision's digest once the operator has validated it ("" after kWait).
  std::string DigestOnceValidated(const std::string& name) {
    std::string digest;
    WaitUntil(
        [&] {
          auto object = client_->Get(core::resources::ModelRevisions(), namespace_, name);
          digest = object ? core::StringMember(*object, {"status", "digest"}) : "";
          return !digest.empty();
        },
        kWait);
    return digest;
  }

  bool HasEvent(const std::string& pod, const std::string& reason, const std::string& text) {
    for (const json& event : EventsAbout(pod)) {
      if (event.value("reason", "") == reason &&
          event.value("note", "").find(text) != std::string::npos) {
        return true;
      }
    }
    return false;
  }

  std::string EventNotes(const std::string& pod) {
    std::string notes;
    for (const json& event : EventsAbout(pod)) {
      notes += event.value("reason", "") + ": " + event.value("note", "") + "\n";
    }
    return notes;
  }

  // Two KWOK nodes with a ModelCache, by name.
  std::vector<std::string> TwoNodes() {
    std::vector<std::string> nodes;
    auto caches = client_->ListAll(core::resources::ModelCaches(), "", {});
    if (!caches) return nodes;
    for (const json& cache : caches->items) {
      const std::string name = cache["metadata"]["name"];
      if (name.starts_with("gpu-node-") && nodes.size() < 2) nodes.push_back(name);
    }
    return nodes;
  }
};

TEST_F(AdaptersClusterTest, EachAdapterIsMountedReadOnlyAndThoseThatCannotServeTheBaseRefused) {
  ASSERT_TRUE(CreateRevision(Revision(namespace_, "llama-r1")));
  const std::string base = DigestOnceValidated("llama-r1");
  ASSERT_FALSE(base.empty()) << ReadFile(log_);
  ASSERT_TRUE(CreateRevision(AdapterRevision(namespace_, "sql-lora", base)));
  ASSERT_TRUE(
      CreateRevision(AdapterRevision(namespace_, "other-lora", "sha256:" + std::string(64, 'c'))));
  const std::string adapter = DigestOnceValidated("sql-lora");
  ASSERT_FALSE(adapter.empty()) << ReadFile(log_);
  for (const char* name : {"sql-lora", "other-lora"}) {
    ASSERT_TRUE(WaitUntilTheWebhookSees(name)) << ReadFile(log_);
  }

  auto created = CreatePod(PodWithAdapters(namespace_, "llama-0", "sql-lora"));
  ASSERT_TRUE(created) << created.error().ToString() << "\n" << ReadFile(log_);
  const json pod = GetPod("llama-0");
  const json volume = Named(pod["spec"]["volumes"], "modelplane-adapter-0");
  EXPECT_EQ(volume["csi"], json::parse(R"({"driver":"csi.modelplane.io","readOnly":true,
                            "volumeAttributes":{"modelplane.io/revision":"sql-lora"}})"))
      << pod["spec"]["volumes"].dump();
  const json& server = pod["spec"]["containers"][0];
  EXPECT_EQ(Named(server["volumeMounts"], "modelplane-adapter-0"),
            json::parse(R"({"name":"modelplane-adapter-0",
                            "mountPath":"/models/adapters/sql-lora","readOnly":true})"));
  EXPECT_EQ(Named(server["env"], "MODELPLANE_LORA_MODULES")["valueFrom"]["fieldRef"]["fieldPath"],
            "metadata.annotations['modelplane.io/lora-modules']");
  EXPECT_EQ(pod["metadata"]["annotations"].value("modelplane.io/lora-modules", ""),
            core::api::AdapterEngineName("sql-lora", adapter) + "=/models/adapters/sql-lora");

  auto other_base = CreatePod(PodWithAdapters(namespace_, "llama-1", "other-lora"));
  ASSERT_FALSE(other_base);
  EXPECT_THAT(other_base.error().message(),
              HasSubstr("adapter " + namespace_ + "/other-lora applies to base sha256:cccc"));
  EXPECT_THAT(other_base.error().message(),
              HasSubstr("not to revision " + namespace_ + "/llama-r1's " + base));
  ASSERT_TRUE(CreateRevision(Revision(namespace_, "llama-r2")));
  ASSERT_TRUE(WaitUntilTheWebhookSees("llama-r2"));
  auto not_adapter = CreatePod(PodWithAdapters(namespace_, "llama-2", "llama-r2"));
  ASSERT_FALSE(not_adapter);
  EXPECT_THAT(not_adapter.error().message(), HasSubstr("is not an adapter"));
  auto foreign = CreatePod(PodWithAdapters(namespace_, "llama-3", "kube-system/sql-lora"));
  ASSERT_FALSE(foreign);
  EXPECT_THAT(foreign.error().message(), HasSubstr("only a ModelRevision in its own namespace"));
}

TEST_F(AdaptersClusterTest, APodGoesOnlyWhereItsRevisionAndAdaptersAreAllReady) {
  ASSERT_TRUE(CreateRevision(Revision(namespace_, "llama-r1")));
  const std::string base = DigestOnceValidated("llama-r1");
  ASSERT_FALSE(base.empty()) << ReadFile(log_);
  ASSERT_TRUE(WaitUntilTheWebhookSees("llama-r1")) << ReadFile(log_);

  // Admitted before its adapter exists: gated, told what it waits for, no names yet.
  auto created = CreatePod(PodWithAdapters(namespace_, "llama-0", "sql-lora"));
  ASSERT_TRUE(created) << created.error().ToString();
  EXPECT_FALSE(GetPod("llama-0")["metadata"]["annotations"].contains("modelplane.io/lora-modules"));
  ASSERT_TRUE(WaitUntil(
      [&] { return HasEvent("llama-0", "WaitingForAdapter", "which does not exist yet"); }, kWait))
      << EventNotes("llama-0") << ReadFile(log_);

  ASSERT_TRUE(CreateRevision(AdapterRevision(namespace_, "sql-lora", base)));
  const std::string adapter = DigestOnceValidated("sql-lora");
  ASSERT_FALSE(adapter.empty()) << ReadFile(log_);
  const std::vector<std::string> nodes = TwoNodes();
  ASSERT_EQ(nodes.size(), 2U);

  // The revision alone on one node: the pod waits for its adapter there.
  ASSERT_TRUE(ReportReady(nodes[0], {base}));
  ASSERT_TRUE(WaitUntil(
      [&] {
        return HasEvent("llama-0", "WaitingForWeights",
                        "waiting for adapters " + namespace_ + "/sql-lora on " + nodes[0]);
      },
      kWait))
      << EventNotes("llama-0") << ReadFile(log_);
  EXPECT_TRUE(GetPod("llama-0")["spec"].contains("schedulingGates"));

  // Both on the other: the pod goes there only, with the names its engine serves them under.
  ASSERT_TRUE(ReportReady(nodes[1], {base, adapter}));
  ASSERT_TRUE(
      WaitUntil([&] { return GetPod("llama-0")["spec"].value("nodeName", "") != ""; }, kWait))
      << EventNotes("llama-0") << ReadFile(log_);
  const json pod = GetPod("llama-0");
  EXPECT_EQ(pod["spec"]["nodeName"], nodes[1]);
  EXPECT_EQ(pod["spec"]["affinity"]["nodeAffinity"]
               ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
                   .size(),
            1U)
      << pod["spec"]["affinity"].dump();
  EXPECT_EQ(pod["metadata"]["annotations"].value("modelplane.io/lora-modules", ""),
            core::api::AdapterEngineName("sql-lora", adapter) + "=/models/adapters/sql-lora");
  EXPECT_EQ(pod["metadata"]["annotations"].value("modelplane.io/revision-digest", ""), base);
  EXPECT_TRUE(HasEvent("llama-0", "WeightsVerified",
                       "ModelRevision " + namespace_ + "/llama-r1 and adapters " + namespace_ +
                           "/sql-lora are verified on " + nodes[1]))
      << EventNotes("llama-0");
}

// The common order on a node: the adapter, staged beside its base, becomes Ready after it. Only
// the adapter's digest changes in the node's status, so something must wake the revision the
// pod names (serving_pods.h, RevisionsWaitingForAdapters): the operator's ControllerManager
// does not yet, and the pod would wait for the next resync (5 minutes by default).
TEST_F(AdaptersClusterTest, AnAdapterReadyAfterItsRevisionLetsThePodGo) {
  ASSERT_TRUE(CreateRevision(Revision(namespace_, "llama-r1")));
  const std::string base = DigestOnceValidated("llama-r1");
  ASSERT_FALSE(base.empty()) << ReadFile(log_);
  ASSERT_TRUE(CreateRevision(AdapterRevision(namespace_, "sql-lora", base)));
  const std::string adapter = DigestOnceValidated("sql-lora");
  ASSERT_FALSE(adapter.empty()) << ReadFile(log_);
  ASSERT_TRUE(WaitUntilTheWebhookSees("sql-lora")) << ReadFile(log_);
  ASSERT_TRUE(CreatePod(PodWithAdapters(namespace_, "llama-0", "sql-lora")));
  const std::vector<std::string> nodes = TwoNodes();
  ASSERT_FALSE(nodes.empty());
  ASSERT_TRUE(ReportReady(nodes[0], {base}));
  ASSERT_TRUE(WaitUntil(
      [&] { return HasEvent("llama-0", "WaitingForWeights", "waiting for adapters"); }, kWait))
      << EventNotes("llama-0") << ReadFile(log_);
  ASSERT_TRUE(ReportReady(nodes[0], {base, adapter}));
  ASSERT_TRUE(WaitUntil([&] { return GetPod("llama-0")["spec"].value("nodeName", "") == nodes[0]; },
                        std::chrono::seconds(10)))
      << EventNotes("llama-0") << ReadFile(log_);
}

}  // namespace
}  // namespace modelplane::controller
