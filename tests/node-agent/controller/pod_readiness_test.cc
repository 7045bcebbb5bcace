#include "node-agent/controller/pod_readiness.h"

#include <gtest/gtest.h>

#include "core/config/config_loader.h"
#include "node-agent/agent_config.h"

namespace modelplane::agent {
namespace {

core::Pod GatedPod(const std::string& annotation) {
  core::Pod pod;
  pod.metadata.name = "server-0";
  pod.metadata.namespace_name = "serving";
  pod.readiness_gates = {"modelplane.io/weights-ready"};
  if (!annotation.empty()) pod.metadata.annotations["modelplane.io/revision"] = annotation;
  return pod;
}

TEST(PodReadinessTest, RevisionComesFromTheAnnotationInThePodsNamespace) {
  auto same = GatedRevision(GatedPod("llama-r1"));
  ASSERT_TRUE(same);
  EXPECT_EQ(same->namespace_name, "serving");
  EXPECT_EQ(same->name, "llama-r1");
  auto spelled_out = GatedRevision(GatedPod("serving/llama-r2"));
  ASSERT_TRUE(spelled_out);
  EXPECT_EQ(spelled_out->namespace_name, "serving");
  EXPECT_EQ(spelled_out->name, "llama-r2");
}

TEST(PodReadinessTest, ARevisionInAnotherNamespaceIsRefused) {
  // The webhook refuses such a pod; the agent must not gate it on, nor count it as a user of,
  // another namespace's weights.
  EXPECT_FALSE(GatedRevision(GatedPod("models/llama-r2")));
  core::Pod ungated = GatedPod("models/llama-r2");
  ungated.readiness_gates.clear();
  EXPECT_FALSE(NamedRevision(ungated));
}

TEST(PodReadinessTest, AnAnnotationThatNamesNothingValidIsRefused) {
  for (const char* value : {"Llama", "llama_r1", "-llama", "serving/", "/llama-r1",
                            "serving/llama/r1", "serving/Llama", "a b"}) {
    EXPECT_FALSE(GatedRevision(GatedPod(value))) << value;
    core::Pod ungated = GatedPod(value);
    ungated.readiness_gates.clear();
    EXPECT_FALSE(NamedRevision(ungated)) << value;
  }
  EXPECT_FALSE(GatedRevision(GatedPod(std::string(254, 'a'))));
}

TEST(PodReadinessTest, PodsWithoutTheGateOrTheAnnotationAreNotOurs) {
  EXPECT_FALSE(GatedRevision(GatedPod("")));
  core::Pod ungated = GatedPod("llama-r1");
  ungated.readiness_gates.clear();
  EXPECT_FALSE(GatedRevision(ungated));
}

TEST(PodReadinessTest, APodWithoutTheGateStillNamesItsRevision) {
  core::Pod ungated = GatedPod("llama-r1");
  ungated.readiness_gates.clear();
  auto named = NamedRevision(ungated);
  ASSERT_TRUE(named) << "it uses the weights: retention must count it";
  EXPECT_EQ(named->namespace_name, "serving");
  EXPECT_EQ(named->name, "llama-r1");
  EXPECT_FALSE(NamedRevision(GatedPod("")));
}

TEST(PodReadinessTest, OnlyPodsThatFinishedAreNotLive) {
  core::Pod pod = GatedPod("llama-r1");
  pod.phase = "Running";
  EXPECT_TRUE(PodIsLive(pod));
  pod.phase = "Pending";
  EXPECT_TRUE(PodIsLive(pod));
  for (const char* done : {"Succeeded", "Failed"}) {
    pod.phase = done;
    EXPECT_FALSE(PodIsLive(pod)) << done;
  }
}

TEST(PodReadinessTest, ConditionIsTrueOnlyWhenTheAgentSetIt) {
  core::Pod pod = GatedPod("llama-r1");
  EXPECT_FALSE(WeightsReadyIsTrue(pod));
  pod.conditions.push_back({.type = "modelplane.io/weights-ready", .status = "False"});
  EXPECT_FALSE(WeightsReadyIsTrue(pod));
  pod.conditions.back().status = "True";
  EXPECT_TRUE(WeightsReadyIsTrue(pod));
}

TEST(PodReadinessTest, PatchMergesOneConditionByType) {
  const auto patch = WeightsReadyPatch("sha256:ab", "peer", "2026-11-29T21:00:00Z");
  const auto& conditions = patch["status"]["conditions"];
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0]["type"], "modelplane.io/weights-ready");
  EXPECT_EQ(conditions[0]["status"], "True");
  EXPECT_EQ(conditions[0]["reason"], "WeightsVerified");
  EXPECT_NE(conditions[0]["message"].get<std::string>().find("peer"), std::string::npos);
}

TEST(PodReadinessTest, NotReadyPatchSetsTheSameConditionFalseWithItsReason) {
  const auto patch = WeightsNotReadyPatch(
      kReasonRevisionRevoked, "revision serving/llama-r1 is revoked", "2026-11-29T21:00:00Z");
  const auto& conditions = patch["status"]["conditions"];
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0]["type"], "modelplane.io/weights-ready");
  EXPECT_EQ(conditions[0]["status"], "False");
  EXPECT_EQ(conditions[0]["reason"], "RevisionRevoked");
  EXPECT_EQ(conditions[0]["message"], "revision serving/llama-r1 is revoked");
  EXPECT_EQ(conditions[0]["lastTransitionTime"], "2026-11-29T21:00:00Z");
}

TEST(AgentConfigTest, CsiIsOffByDefaultAndItsPathsAreChecked) {
  auto defaults = core::LoadConfigString<AgentConfig>("nodeName: n\n");
  ASSERT_TRUE(defaults) << defaults.error().ToString();
  EXPECT_FALSE(defaults->csi.enabled);
  EXPECT_EQ(defaults->csi.socket_path, "/var/lib/kubelet/plugins/csi.modelplane.io/csi.sock");
  EXPECT_EQ(defaults->csi.target_root, "/var/lib/kubelet/pods");
  EXPECT_EQ(defaults->csi.registration_socket_path, "");
  auto config = core::LoadConfigString<AgentConfig>(
      "csi: {enabled: true, socketPath: /run/csi/csi.sock, targetRoot: /data/kubelet/pods,\n"
      "      registrationSocketPath: /data/kubelet/plugins_registry/csi.modelplane.io-reg.sock}\n");
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_TRUE(config->csi.enabled);
  EXPECT_EQ(config->csi.socket_path, "/run/csi/csi.sock");
  EXPECT_EQ(config->csi.registration_socket_path,
            "/data/kubelet/plugins_registry/csi.modelplane.io-reg.sock");
  EXPECT_EQ(config->csi.target_root, "/data/kubelet/pods");
  for (const char* bad : {"csi: {socketPath: relative.sock}\n", "csi: {targetRoot: /}\n",
                          "csi: {registrationSocketPath: relative-reg.sock}\n",
                          "csi: {socketPath: /run/a.sock, registrationSocketPath: /run/a.sock}\n",
                          "csi: {targetRoot: /var/lib/kubelet/../pods}\n",
                          "csi: {targetRoot: /var/lib/kubelet/pods/}\n", "csi: {enable: true}\n"}) {
    EXPECT_FALSE(core::LoadConfigString<AgentConfig>(bad)) << bad;
  }
  EXPECT_FALSE(
      core::LoadConfigString<AgentConfig>("csi: {socketPath: /" + std::string(120, 's') + "}\n"));
}

TEST(AgentConfigTest, ReadsEveryKeyAndRefusesBadRanges) {
  auto config = core::LoadConfigString<AgentConfig>(R"(
nodeName: gpu-node-0
cacheRoot: /var/cache/modelplane
capacity: 500Gi
fetch: {rangeSize: 16Mi, inFlight: 32, bufferPool: 512Mi, rangeTimeout: 30s, concurrentStagings: 3}
peers: {port: 7443, tokenKeyFile: /etc/peer/key, maxUploadRate: 2Gi, maxStreams: 8, maxReaders: 1,
        requireTickets: false}
statusInterval: 2s
)");
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->capacity.bytes, 500ull << 30);
  EXPECT_EQ(config->fetch.range_size.bytes, 16ull << 20);
  EXPECT_EQ(config->fetch.in_flight, 32);
  EXPECT_EQ(config->peers.max_upload_rate.bytes, 2ull << 30);
  EXPECT_EQ(config->peers.max_streams, 8);
  EXPECT_EQ(config->peers.max_readers, 1);
  EXPECT_EQ(core::LoadConfigString<AgentConfig>("{}\n")->peers.max_readers, 4);
  EXPECT_FALSE(core::LoadConfigString<AgentConfig>("peers: {maxReaders: -1}\n"));
  EXPECT_FALSE(config->peers.require_tickets);
  EXPECT_TRUE(core::LoadConfigString<AgentConfig>("{}\n")->peers.require_tickets);
  EXPECT_EQ(config->status_interval, std::chrono::seconds(2));
  EXPECT_FALSE(core::LoadConfigString<AgentConfig>("fetch: {rangeSize: 1000}\n"));
  EXPECT_FALSE(core::LoadConfigString<AgentConfig>("fetch: {rangeSize: 8Mi, bufferPool: 4Mi}\n"));
  EXPECT_FALSE(core::LoadConfigString<AgentConfig>("cacheRoot: relative/path\n"));
  EXPECT_FALSE(core::LoadConfigString<AgentConfig>("peers: {unknownKey: 1}\n"));
}

}  // namespace
}  // namespace modelplane::agent
