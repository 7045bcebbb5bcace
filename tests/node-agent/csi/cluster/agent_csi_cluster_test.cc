// The CSI plugin inside the real `modelplane-node-agent run` process, against the local control
// plane (scripts/test.sh starts it): csi-sanity, the CSI project's conformance suite, against
// the agent's socket; publishing through the agent's own resolver (the NodeController's
// informers) in the pod's namespace; and the readiness gate going False again when the
// revision is revoked or its manifest is gone from the store.
//
// Each test gets a Node object of its own that no kubelet or KWOK manages (the agent looks its
// node up; nothing else runs there), a cache root with a staged revision, and its own agent.
#include <fstream>
#include <iostream>
#include <sstream>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <sys/mount.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/api/model_revision.h"
#include "csi.grpc.pb.h"
#include "node-agent/csi/mount_info.h"
#include "node-agent/revision/loaded_revision.h"
#include "node-agent/store/revision_view.h"
#include "tests/core/kube/cluster/cluster_fixture.h"
#include "tests/node-agent/csi/staged_revision.h"
#include "tests/node-agent/node_agent_process.h"
#include "tests/support/child_process.h"
#include "tests/support/signing_fixtures.h"

namespace modelplane::agent {
namespace {

using core::testing::RunCommand;
using core::testing::WaitUntil;
using ::modelplane::testing::ChildProcess;
using nlohmann::json;
using Mode = csi::v1::VolumeCapability::AccessMode;

constexpr auto kWait = std::chrono::seconds(30);

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class AgentCsiClusterTest : public core::testing::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!ModelplaneCrdsInstalled()) GTEST_SKIP() << core::testing::kModelplaneCrdsMissing;
    node_ = namespace_;  // unique per test run, and a valid node name
    base_ = std::filesystem::path("/tmp") / (namespace_ + "-csi");
    RemoveTree(base_);
    std::filesystem::create_directories(base_ / "pods");
    auto node =
        client_->Create(core::resources::Nodes(), "",
                        {{"apiVersion", "v1"},
                         {"kind", "Node"},
                         {"metadata", {{"name", node_}, {"labels", {{"type", "csi-test"}}}}}});
    ASSERT_TRUE(node) << node.error().ToString();

    // The revision: created first, read back (the server applies the CRD's defaults), and its
    // digest computed as the agent will compute it; then its files staged under that digest.
    files_ = {{"config.json", R"({"architectures": ["LlamaForCausalLM"]})"},
              {"model.safetensors", std::string(200'000, 'w') + "end"},
              {"tokenizer/tokenizer.json", "{\"vocab\": {}}"}};
    json spec_files = json::array();
    for (const auto& [path, content] : files_) {
      spec_files.push_back({{"path", path},
                            {"size", content.size()},
                            {"sha256", core::FormatDigest(core::Sha256Of(content))},
                            {"role", path.ends_with(".safetensors") ? "weights" : "config"}});
    }
    const json revision = {
        {"apiVersion", "modelplane.io/v1alpha1"},
        {"kind", "ModelRevision"},
        {"metadata", {{"name", "llama-r1"}, {"namespace", namespace_}}},
        {"spec",
         {{"files", spec_files},
          {"format", "safetensors"},
          {"engine", {{"name", "vllm"}, {"version", "0.6.0"}}},
          {"sources",
           json::array({{{"name", "s3"},
                         {"type", "objectStore"},
                         {"objectStore", {{"bucket", "models"}, {"prefix", "llama"}}}}})}}}};
    auto created = client_->Create(core::resources::ModelRevisions(), namespace_, revision);
    ASSERT_TRUE(created) << created.error().ToString();
    auto parsed = core::api::ModelRevisionFromJson(*created);
    ASSERT_TRUE(parsed) << parsed.error().ToString();
    auto loaded = CheckRevision(std::move(*parsed));
    ASSERT_TRUE(loaded) << loaded.error().ToString();
    digest_ = loaded->digest;
    {
      auto store = CacheStore::Open({.root = base_ / "cache", .headroom_bytes = 0});
      ASSERT_TRUE(store) << store.error().ToString();
      ASSERT_TRUE(testing::StageRevision(**store, files_, digest_, namespace_ + "/llama-r1"));
      ASSERT_TRUE(testing::RecordStagedFromOwnSources(**store, digest_, namespace_ + "/llama-r1"));
    }
    config_ = (base_ / "agent.yaml").string();
    std::ofstream(config_) << "nodeName: " << node_ << "\n"
                           << "cacheRoot: " << (base_ / "cache").string() << "\n"
                           << "sourcePolicy: {objectStores: [{buckets: [models], "
                           << "nodeCredentials: true}]}\n"
                           << "admin: {address: 127.0.0.1, port: 0}\n"
                           << "kubernetes: {kubeconfig: " << kubeconfig_path_ << "}\n"
                           << "peers: {enabled: false}\n"
                           << "statusInterval: 200ms\n"
                           << "csi: {enabled: true, socketPath: " << Socket()
                           << ", targetRoot: " << (base_ / "pods").string() << "}\n";
    StartAgent();
  }

  void TearDown() override {
    StopAgent();
    if (!base_.empty()) {
      if (auto mounts = ReadMountInfo()) {
        for (const MountEntry& mount : *mounts) {
          if (mount.mount_point.starts_with(base_.string())) {
            ::umount2(mount.mount_point.c_str(), MNT_DETACH);
          }
        }
      }
      RemoveTree(base_);
    }
    if (client_ && !node_.empty()) {
      (void)client_->Delete(core::resources::Nodes(), "", node_);
      (void)client_->Delete(core::resources::ModelCaches(), "", node_);
    }
    ClusterTest::TearDown();
  }

  std::string Socket() const { return (base_ / "csi.sock").string(); }
  std::string Log() const { return ReadFile((base_ / "agent.log").string()); }

  void StartAgent() {
    auto agent =
        ::modelplane::testing::StartNodeAgentProcess(config_, (base_ / "agent.log").string());
    ASSERT_TRUE(agent) << agent.error().ToString();
    agent_ = std::move(*agent);
    // Running means the informers synced: Probe says ready from here on.
    // The log is appended to across restarts: wait for this run's line.
    ASSERT_TRUE(WaitUntil([&] { return Count("event=node_agent_running") > started_; }, kWait))
        << Log();
    ++started_;
    auto channel = grpc::CreateChannel("unix://" + Socket(), grpc::InsecureChannelCredentials());
    node_client_ = csi::v1::Node::NewStub(channel);
    identity_client_ = csi::v1::Identity::NewStub(channel);
  }

  void StopAgent() {
    if (!agent_.has_process()) return;
    // Close our connection first: an idle gRPC C++ client notices the server's GOAWAY only at
    // its 5 s backup poll, and the server's shutdown waits for the connection (kubelet's Go
    // client answers at once).
    node_client_.reset();
    identity_client_.reset();
    EXPECT_EQ(agent_.Stop().code, 0) << Log();
  }

  std::size_t Count(const std::string& needle) const {
    const std::string log = Log();
    std::size_t count = 0;
    for (auto at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) {
      ++count;
    }
    return count;
  }

  std::string Target(const std::string& pod) const {
    return (base_ / "pods" / pod / "volumes/kubernetes.io~csi/weights/mount").string();
  }

  grpc::Status Publish(const std::string& volume, const std::string& pod,
                       const std::string& pod_namespace, const std::string& revision) {
    csi::v1::NodePublishVolumeRequest request;
    request.set_volume_id(volume);
    request.set_target_path(Target(pod));
    request.mutable_volume_capability()->mutable_mount();
    request.mutable_volume_capability()->mutable_access_mode()->set_mode(Mode::SINGLE_NODE_WRITER);
    auto& context = *request.mutable_volume_context();
    context["modelplane.io/revision"] = revision;
    context["csi.storage.k8s.io/pod.namespace"] = pod_namespace;
    context["csi.storage.k8s.io/pod.name"] = pod;
    context["csi.storage.k8s.io/pod.uid"] = pod + "-uid";
    context["csi.storage.k8s.io/ephemeral"] = "true";
    csi::v1::NodePublishVolumeResponse response;
    grpc::ClientContext call;
    call.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return node_client_->NodePublishVolume(&call, request, &response);
  }

  grpc::Status Unpublish(const std::string& volume, const std::string& pod) {
    csi::v1::NodeUnpublishVolumeRequest request;
    request.set_volume_id(volume);
    request.set_target_path(Target(pod));
    csi::v1::NodeUnpublishVolumeResponse response;
    grpc::ClientContext call;
    call.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return node_client_->NodeUnpublishVolume(&call, request, &response);
  }

  // The revision revoked, and what the operator's ModelCache controller then writes into the
  // caches that hold it (operator/controllers/holdings.h): the agent reads no revision's changes
  // from a watch, only its own ModelCache. The mount check reads the revision itself.
  void Revoke() {
    auto patched = client_->Patch(core::resources::ModelRevisions(), namespace_, "llama-r1",
                                  core::PatchType::kMerge, {{"spec", {{"revoked", true}}}});
    ASSERT_TRUE(patched) << patched.error().ToString();
    const json holdings = {
        {"apiVersion", "modelplane.io/v1alpha1"},
        {"kind", "ModelCache"},
        {"metadata", {{"name", node_}}},
        {"spec",
         {{"holdings",
           json::array({{{"digest", core::FormatDigest(digest_)}, {"revoked", true}}})}}}};
    auto written =
        client_->Patch(core::resources::ModelCaches(), "", node_, core::PatchType::kApply, holdings,
                       {.field_manager = "modelplane-operator-holdings", .force = true});
    ASSERT_TRUE(written) << written.error().ToString();
  }

  // A pod bound to this test's node (no scheduler, no kubelet) that waits for the revision.
  void CreateServingPod(const std::string& name) {
    const json pod = {{"apiVersion", "v1"},
                      {"kind", "Pod"},
                      {"metadata",
                       {{"name", name},
                        {"namespace", namespace_},
                        {"annotations", {{"modelplane.io/revision", "llama-r1"}}}}},
                      {"spec",
                       {{"nodeName", node_},
                        {"automountServiceAccountToken", false},
                        {"readinessGates", {{{"conditionType", "modelplane.io/weights-ready"}}}},
                        {"containers", {{{"name", "server"}, {"image", "example.com/vllm:1"}}}}}}};
    // The namespace's default ServiceAccount may not exist yet; admission needs it.
    core::Result<json> created = std::unexpected(core::Error(core::ErrorCode::kInternal, ""));
    ASSERT_TRUE(WaitUntil(
        [&] {
          created = client_->Create(core::resources::Pods(), namespace_, pod);
          return created.has_value();
        },
        kWait))
        << created.error().ToString();
  }

  // The weights-ready condition of the pod: {status, reason}, empty when absent.
  std::pair<std::string, std::string> WeightsReady(const std::string& name) {
    auto pod = client_->Get(core::resources::Pods(), namespace_, name);
    if (!pod) return {};
    for (const json& condition :
         pod->value("status", json::object()).value("conditions", json::array())) {
      if (condition.value("type", "") == "modelplane.io/weights-ready") {
        return {condition.value("status", ""), condition.value("reason", "")};
      }
    }
    return {};
  }

  // The reason of the pod's weights-ready once it goes False, empty if it never does. Status
  // and reason come from one read: the agent may stage the revision again from the blobs it
  // still holds, and then the condition goes back to True on its own.
  std::string WaitForWeightsLost(const std::string& pod) {
    std::pair<std::string, std::string> condition;
    const bool lost = WaitUntil(
        [&] {
          condition = WeightsReady(pod);
          return condition.first == "False";
        },
        kWait);
    return lost ? condition.second : "";
  }

  std::string node_;
  std::filesystem::path base_;
  std::string config_;
  std::map<std::string, std::string> files_;
  core::Sha256Bytes digest_{};
  ChildProcess agent_;
  std::size_t started_ = 0;
  std::unique_ptr<csi::v1::Node::Stub> node_client_;
  std::unique_ptr<csi::v1::Identity::Stub> identity_client_;
};

// csi-sanity skips, and why (docs/csi.md):
//  - "[Controller Server]" (the Controller Service, snapshot, expansion and modify specs): the
//    plugin offers no controller service (GetPluginCapabilities says so), but csi-sanity calls
//    ControllerGetCapabilities in their set-up regardless.
//  - "NodeUnpublishVolume should remove target path": it creates its volume with CreateVolume,
//    a controller call an ephemeral-only driver does not have. (The Node Service's own "should
//    work" and "should be idempotent" skip themselves for the same reason.)
constexpr char kSanitySkip[] =
    R"(\[Controller Server\]|NodeUnpublishVolume should remove target path)";

TEST_F(AgentCsiClusterTest, CsiSanityPassesAgainstTheAgentsSocket) {
  std::string sanity;
  ASSERT_EQ(RunCommand(std::string(MODELPLANE_SOURCE_DIR) + "/e2e/tools.sh csi-sanity", &sanity), 0)
      << "csi-sanity is not built: e2e/tools.sh build (scripts/setup.sh runs it)";
  while (!sanity.empty() && std::isspace(static_cast<unsigned char>(sanity.back())))
    sanity.pop_back();
  std::string output;
  const int status =
      RunCommand(sanity + " --csi.endpoint=unix://" + Socket() +
                     " --csi.mountdir=" + (base_ / "pods" / "sanity-target").string() +
                     " --csi.stagingdir=" + (base_ / "pods" / "sanity-staging").string() +
                     " '-ginkgo.skip=" + kSanitySkip + "' -ginkgo.no-color -ginkgo.v 2>&1",
                 &output);
  EXPECT_EQ(status, 0) << output << "\n" << Log();
  // Ginkgo's summary: "Ran N of M Specs" and "SUCCESS! ... | 0 Failed | ...".
  const auto line_at = [&](std::string_view start) {
    const auto at = output.find(start);
    if (at == std::string::npos) return std::string();
    return output.substr(at, output.find('\n', at) - at);
  };
  const std::string ran = line_at("Ran ");
  ASSERT_FALSE(ran.empty()) << output;
  EXPECT_GE(std::atoi(ran.c_str() + 4), 10) << output;  // what it could run, it ran
  const std::string summary = line_at("SUCCESS!");
  EXPECT_FALSE(summary.empty()) << output;
  std::cout << "csi-sanity: " << ran << "; " << summary << "\n";
  EXPECT_NE(output.find(" 0 Failed"), std::string::npos) << output;
  // The calls reached the agent and were refused for the right reasons.
  EXPECT_GT(Count("event=csi_call_failed"), 0u) << Log();
}

// The agent's own resolver: the revision in the POD's namespace (kubelet's pod info), Ready in
// this store, mounted; a pod of another namespace naming the same revision name finds nothing;
// once revoked, no new mount. Mounting needs root.
TEST_F(AgentCsiClusterTest, PublishResolvesInThePodsNamespaceAndStopsOnceRevoked) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: the agent bind-mounts the revision view";
  const grpc::Status published = Publish("csi-1", "server-0", namespace_, "llama-r1");
  ASSERT_TRUE(published.ok()) << published.error_message() << "\n" << Log();
  for (const auto& [path, content] : files_) {
    EXPECT_EQ(ReadFile(Target("server-0") + "/" + path), content) << path;
  }
  const grpc::Status elsewhere = Publish("csi-2", "server-1", "default", "llama-r1");
  EXPECT_EQ(elsewhere.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(elsewhere.error_message().find("default/llama-r1 cannot be mounted: not found"),
            std::string::npos)
      << elsewhere.error_message();
  const grpc::Status unknown = Publish("csi-3", "server-2", namespace_, "llama-r9");
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::FAILED_PRECONDITION);

  Revoke();
  grpc::Status revoked;
  ASSERT_TRUE(WaitUntil(
      [&] {
        revoked = Publish("csi-4", "server-3", namespace_, "llama-r1");
        return revoked.error_code() == grpc::StatusCode::FAILED_PRECONDITION;
      },
      kWait))
      << revoked.error_message();
  EXPECT_NE(revoked.error_message().find("is revoked"), std::string::npos)
      << revoked.error_message();
  // The mount made before the revocation is the pod's until kubelet unpublishes it.
  ASSERT_TRUE(Unpublish("csi-1", "server-0").ok());
  EXPECT_FALSE(std::filesystem::exists(Target("server-0")));
}

// The same files (so the same digest, held Ready here) under a signature no signer of the
// agent's policy made: the bytes on the node do not make that revision mountable.
TEST_F(AgentCsiClusterTest, ARevisionWhoseSignatureDoesNotVerifyIsNotMounted) {
  auto original = client_->Get(core::resources::ModelRevisions(), namespace_, "llama-r1");
  ASSERT_TRUE(original) << original.error().ToString();
  json signed_copy = {{"apiVersion", "modelplane.io/v1alpha1"},
                      {"kind", "ModelRevision"},
                      {"metadata", {{"name", "llama-signed"}, {"namespace", namespace_}}},
                      {"spec", (*original)["spec"]}};
  signed_copy["spec"]["signatures"] = json::array(
      {{{"bundle", ::modelplane::testing::SigningFixture("bundle-key-untrusted.json")}}});
  auto created = client_->Create(core::resources::ModelRevisions(), namespace_, signed_copy);
  ASSERT_TRUE(created) << created.error().ToString();
  const grpc::Status refused = Publish("csi-5", "server-5", namespace_, "llama-signed");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("SignatureUntrusted"), std::string::npos)
      << refused.error_message();
  EXPECT_FALSE(std::filesystem::exists(Target("server-5") + "/config.json"));
}

// The same revision (same name, same files, so the same digest, held Ready here) copied into
// another namespace that has no copy of its own: the bytes held for this namespace do not make
// the copy mountable, since nothing showed that the copy's own sources serve them.
TEST_F(AgentCsiClusterTest, ACopyInAnotherNamespaceIsNotMountedFromTheBytesHeldHere) {
  const std::string other = CreateOtherNamespace();
  ASSERT_FALSE(other.empty());
  auto original = client_->Get(core::resources::ModelRevisions(), namespace_, "llama-r1");
  ASSERT_TRUE(original) << original.error().ToString();
  const json copy = {{"apiVersion", "modelplane.io/v1alpha1"},
                     {"kind", "ModelRevision"},
                     {"metadata", {{"name", "llama-r1"}, {"namespace", other}}},
                     {"spec", (*original)["spec"]}};
  auto created = client_->Create(core::resources::ModelRevisions(), other, copy);
  ASSERT_TRUE(created) << created.error().ToString();
  const grpc::Status refused = Publish("csi-6", "server-6", other, "llama-r1");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("is not Ready in this node's cache"), std::string::npos)
      << refused.error_message();
  EXPECT_FALSE(std::filesystem::exists(Target("server-6") + "/config.json"));
}

TEST_F(AgentCsiClusterTest, ReadinessGoesFalseWhenTheRevisionIsRevoked) {
  CreateServingPod("server-0");
  ASSERT_TRUE(WaitUntil([&] { return WeightsReady("server-0").first == "True"; }, kWait)) << Log();
  Revoke();
  EXPECT_EQ(WaitForWeightsLost("server-0"), "RevisionRevoked") << Log();
  // The agent logs after its patch lands, so the line may trail the condition we saw.
  EXPECT_TRUE(WaitUntil([&] { return Count("event=pod_weights_not_ready") > 0; }, kWait)) << Log();
}

TEST_F(AgentCsiClusterTest, ReadinessGoesFalseWhenTheManifestIsGoneFromTheStore) {
  CreateServingPod("server-0");
  ASSERT_TRUE(WaitUntil([&] { return WeightsReady("server-0").first == "True"; }, kWait)) << Log();
  // The store keeps manifests in memory while it runs: take the manifest away between runs,
  // as a failed verify or a lost disk would.
  StopAgent();
  ASSERT_EQ(::unlink(StoreLayout(base_ / "cache").RevisionPath(digest_).c_str()), 0);
  StartAgent();
  // The agent sets the condition False as soon as it finds the manifest gone, then publishes
  // the revision again from the blobs still on disk (nothing fetched) and sets it True. The
  // False can last a few milliseconds, shorter than any poll of the API server, so the agent's
  // record of writing it is what is checked, then the way back.
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Count("event=pod_weights_not_ready pod=" + namespace_ +
                     "/server-0 reason=WeightsNotVerified") > 0;
      },
      kWait))
      << Log();
  ASSERT_TRUE(WaitUntil([&] { return WeightsReady("server-0").first == "True"; }, kWait)) << Log();
  EXPECT_GT(Count("event=fetch_published"), 0u) << Log();
}

}  // namespace
}  // namespace modelplane::agent
