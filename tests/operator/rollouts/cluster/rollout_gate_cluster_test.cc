// The progressive-delivery gate as Flagger meets it: real HTTP requests with Flagger's webhook
// body to the real modelplane-operator binary, which reads the cluster (the real API server)
// to answer. Agents are played by writing ModelCache statuses and the pods' weights-ready
// condition.
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/http/http_client.h"
#include "tests/core/http/test_certificates.h"
#include "tests/core/kube/cluster/cluster_fixture.h"
#include "tests/support/child_process.h"
#include "tests/support/source_proof_status.h"

namespace modelplane::controller {
namespace {

using core::testing::WaitUntil;
using ::modelplane::testing::ChildProcess;
using nlohmann::json;
using ::testing::HasSubstr;
namespace http = boost::beast::http;

constexpr auto kWait = std::chrono::seconds(30);

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class RolloutGateClusterTest : public core::testing::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!ModelplaneCrdsInstalled()) GTEST_SKIP() << core::testing::kModelplaneCrdsMissing;
    auto directory = core::testing::TemporaryDirectory::Create("rollout-gate");
    ASSERT_TRUE(directory);
    directory_.emplace(std::move(*directory));
    config_ = directory_->path() + "/operator.yaml";
    log_ = directory_->path() + "/operator.log";
    std::ofstream(config_) << "admin: {address: 127.0.0.1, port: 0}\n"
                           << "kubernetes: {kubeconfig: " << kubeconfig_path_ << "}\n"
                           << "sourcePolicy: {objectStores: [{buckets: [models], "
                           << "nodeCredentials: true}]}\n"
                           << "leaderElection: {enabled: false}\n"
                           << "controllers: {namespace: " << namespace_ << "}\n"
                           << "rolloutGates: {enabled: true, address: 127.0.0.1, port: 0}\n";
    auto launched = ChildProcess::Start(
        {std::string(MODELPLANE_BINARY_DIR) + "/operator/modelplane-operator", "--config", config_},
        {.log_path = log_});
    ASSERT_TRUE(launched) << launched.error().ToString();
    operator_ = std::move(*launched);
    std::optional<int> port;
    ASSERT_TRUE(WaitUntil(
        [&] {
          port = core::testing::LoggedPort(ReadFile(log_), "rollout_gates_listening");
          return port.has_value();
        },
        kWait))
        << ReadFile(log_);
    port_ = std::to_string(*port);
    auto http_client = core::HttpClient::Create({.retry = {.max_attempts = 1}});
    ASSERT_TRUE(http_client);
    http_ = std::move(*http_client);
  }

  void TearDown() override {
    if (client_) {
      (void)client_->Delete(core::resources::Deployments(), namespace_, "podinfo");
      (void)client_->Request("DELETE", "/api/v1/namespaces/" + namespace_ + "/pods", nullptr, "");
      (void)DeleteAllInNamespace(core::resources::ModelRevisions(), kWait);
      for (const std::string& node : reported_) {
        (void)client_->Patch(core::resources::ModelCaches(), "", node, core::PatchType::kMerge,
                             {{"status", {{"revisions", json::array()}}}},
                             {.subresource = "status"});
      }
    }
    operator_.Stop();
    ClusterTest::TearDown();
  }

  // Flagger's webhook body; the answer's status and text.
  std::pair<unsigned, std::string> Ask(const std::string& hook, json metadata = json::object()) {
    core::ClientRequest request{.method = http::verb::post,
                                .url = "http://127.0.0.1:" + port_ + "/gates/" + hook,
                                .body = json({{"name", "podinfo"},
                                              {"namespace", namespace_},
                                              {"phase", "Progressing"},
                                              {"checksum", "85d557f47b"},
                                              {"metadata", metadata}})
                                            .dump()};
    request.headers.set(http::field::content_type, "application/json");
    auto answer = http_->Fetch(request);
    if (answer) return {answer->status, answer->body};
    // Non-2xx answers come back as errors that carry the status.
    return {answer.error().http_status().value_or(0), answer.error().message()};
  }

  void ReportReady(const std::string& node, const std::string& digest) {
    auto written = client_->Patch(core::resources::ModelCaches(), "", node, core::PatchType::kMerge,
                                  {{"status",
                                    {{"capacityBytes", 1LL << 40},
                                     {"revisions", ::modelplane::testing::WithOwnSourceProofs(
                                                       *client_, namespace_,
                                                       json::array({{{"digest", digest},
                                                                     {"state", "Ready"},
                                                                     {"bytesDone", 64},
                                                                     {"bytesTotal", 64}}}))}}}},
                                  {.subresource = "status"});
    ASSERT_TRUE(written) << written.error().ToString();
    reported_.push_back(node);
  }

  std::optional<core::testing::TemporaryDirectory> directory_;
  std::string config_;
  std::string log_;
  std::string port_;
  ChildProcess operator_;
  std::unique_ptr<core::HttpClient> http_;
  std::vector<std::string> reported_;
};

TEST_F(RolloutGateClusterTest, HoldsTheCanaryUntilItsRevisionIsReadyWhereItNeedsIt) {
  EXPECT_EQ(Ask("confirm-rollout").first, 403u) << "no Deployment yet";
  const json revision = {
      {"apiVersion", "modelplane.io/v1alpha1"},
      {"kind", "ModelRevision"},
      {"metadata", {{"name", "llama-r2"}, {"namespace", namespace_}}},
      {"spec",
       {{"files", json::array({{{"path", "model.safetensors"},
                                {"size", 64},
                                {"sha256", "sha256:" + std::string(64, '9')},
                                {"role", "weights"}}})},
        {"format", "safetensors"},
        {"engine", {{"name", "vllm"}, {"version", "0.6.0"}}},
        {"sources",
         json::array(
             {{{"name", "s3"}, {"type", "objectStore"}, {"objectStore", {{"bucket", "models"}}}}})},
        {"prestage", {{"nodeSelector", {{"type", "kwok"}}}, {"nodes", 2}}}}}};
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_, revision));
  const json deployment = {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", {{"name", "podinfo"}, {"namespace", namespace_}}},
      {"spec",
       {{"replicas", 2},
        {"selector", {{"matchLabels", {{"app", "podinfo"}}}}},
        {"template",
         {{"metadata",
           {{"labels", {{"app", "podinfo"}}},
            {"annotations", {{"modelplane.io/revision", "llama-r2"}}}}},
          {"spec",
           {{"schedulingGates", json::array({{{"name", "modelplane.io/weights"}}})},
            {"containers", json::array({{{"name", "podinfo"}, {"image", "podinfo"}}})}}}}}}}};
  ASSERT_TRUE(client_->Create(core::resources::Deployments(), namespace_, deployment));

  auto [status, text] = Ask("confirm-rollout");
  EXPECT_EQ(status, 403u);
  EXPECT_THAT(text, HasSubstr("is Ready on 0 nodes; the canary needs 2"));

  // The operator placed two prestage copies; their agents report them Ready.
  std::vector<std::string> nodes;
  ASSERT_TRUE(WaitUntil(
      [&] {
        nodes.clear();
        auto caches = client_->ListAll(core::resources::ModelCaches(), "", {});
        if (!caches) return false;
        for (const json& cache : caches->items) {
          const json spec = cache.value("spec", json::object());
          for (const json& entry : spec.value("revisions", json::array())) {
            if (entry.value("revision", json::object()).value("namespace", "") == namespace_) {
              nodes.push_back(cache["metadata"]["name"]);
            }
          }
        }
        return nodes.size() >= 2;
      },
      kWait));
  // The revision's status may not be written yet when its caches already are.
  std::string digest;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto stored = client_->Get(core::resources::ModelRevisions(), namespace_, "llama-r2");
        if (!stored) return false;
        digest = stored->value("status", json::object()).value("digest", "");
        return !digest.empty();
      },
      kWait));
  ReportReady(nodes[0], digest);
  ASSERT_TRUE(WaitUntil(
      [&] { return Ask("confirm-rollout").second.find("Ready on 1 node") != std::string::npos; },
      kWait));
  EXPECT_EQ(Ask("confirm-rollout", {{"nodes", "1"}}).first, 200u) << "metadata overrides the count";
  ReportReady(nodes[1], digest);
  ASSERT_TRUE(WaitUntil([&] { return Ask("confirm-rollout").first == 200; }, kWait))
      << Ask("confirm-rollout").second;

  // Traffic: every canary pod must have its weights verified.
  EXPECT_EQ(Ask("confirm-traffic-increase").first, 403u);
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto pods = client_->ListAll(core::resources::Pods(), namespace_, {});
        return pods && pods->items.size() == 2;
      },
      kWait));
  auto pods = client_->ListAll(core::resources::Pods(), namespace_, {});
  ASSERT_TRUE(pods);
  for (const json& pod : pods->items) {
    auto patched =
        client_->Patch(core::resources::Pods(), namespace_, pod["metadata"]["name"],
                       core::PatchType::kStrategicMerge,
                       {{"status",
                         {{"conditions", json::array({{{"type", "modelplane.io/weights-ready"},
                                                       {"status", "True"},
                                                       {"reason", "WeightsVerified"}}})}}}},
                       {.subresource = "status"});
    ASSERT_TRUE(patched) << patched.error().ToString();
  }
  const auto [traffic, reason] = Ask("confirm-traffic-increase");
  EXPECT_EQ(traffic, 200u) << reason;
  EXPECT_THAT(reason, HasSubstr("all 2 canary pods"));

  EXPECT_EQ(Ask("confirm-everything").first, 404u);
  EXPECT_EQ(Ask("confirm-rollout", {{"nodes", "many"}}).first, 400u);
}

}  // namespace
}  // namespace modelplane::controller
