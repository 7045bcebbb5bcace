// The fixture of the webhook's cluster tests: the real kube-apiserver calls the real
// modelplane-operator binary over TLS (the CA in the MutatingWebhookConfiguration's caBundle),
// with the matchConditions the chart installs, scoped to the test's namespace so other tests
// never meet it. With leader election off the same process runs the controllers; tests play
// the node agent by writing ModelCache statuses (ReportReady), cleared afterwards.
#pragma once

#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <signal.h>

#include <gtest/gtest.h>

#include "core/json/json_lookup.h"
#include "core/text/base64.h"
#include "tests/core/http/test_certificates.h"
#include "tests/core/kube/cluster/cluster_fixture.h"
#include "tests/support/child_process.h"
#include "tests/support/signing_fixtures.h"
#include "tests/support/source_proof_status.h"

namespace modelplane::controller::webhook_testing {

using core::testing::WaitUntil;
using ::modelplane::testing::ChildProcess;
using nlohmann::json;

inline constexpr auto kWait = std::chrono::seconds(30);

// Test constants: a throw before main ends the test binary either way.
// NOLINTBEGIN(cert-err58-cpp)
inline const core::ResourceType kWebhookConfigurations{"admissionregistration.k8s.io", "v1",
                                                       "mutatingwebhookconfigurations",
                                                       "MutatingWebhookConfiguration", false};
inline const core::ResourceType kValidatingConfigurations{"admissionregistration.k8s.io", "v1",
                                                          "validatingwebhookconfigurations",
                                                          "ValidatingWebhookConfiguration", false};
// NOLINTEND(cert-err58-cpp)
// Revisions with this label are not sent to the validating webhook: they stand for revisions
// that reached the API server around admission (created before the webhook was configured).
inline constexpr std::string_view kAroundAdmission = "test.modelplane.io/around-admission";

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline json Revision(const std::string& ns, const std::string& name, bool revoked = false) {
  return {
      {"apiVersion", "modelplane.io/v1alpha1"},
      {"kind", "ModelRevision"},
      {"metadata", {{"name", name}, {"namespace", ns}}},
      {"spec",
       {{"files", json::array({{{"path", "model.safetensors"},
                                {"size", 64},
                                {"sha256", "sha256:" + std::string(64, '4')},
                                {"role", "weights"}}})},
        {"format", "safetensors"},
        {"engine", {{"name", "vllm"}, {"version", "0.6.0"}}},
        {"sources",
         json::array(
             {{{"name", "s3"}, {"type", "objectStore"}, {"objectStore", {{"bucket", "models"}}}}})},
        {"revoked", revoked}}}};
}

// What a Deployment's pod template would hold: nothing of modelplane's but the annotation.
inline json ServingPod(const std::string& ns, const std::string& name,
                       const std::string& revision) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", ns}}},
              {"spec",
               {{"tolerations", json::array({{{"operator", "Exists"}}})},
                {"nodeSelector", {{"type", "kwok"}}},
                {"containers",
                 json::array({{{"name", "server"}, {"image", "vllm/vllm-openai:v0.11.0"}}})}}}};
  if (!revision.empty()) {
    pod["metadata"]["annotations"] = {{"modelplane.io/revision", revision}};
  }
  return pod;
}

class WebhookClusterTest : public core::testing::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!ModelplaneCrdsInstalled()) GTEST_SKIP() << core::testing::kModelplaneCrdsMissing;
    auto directory = core::testing::TemporaryDirectory::Create("webhook-cluster");
    ASSERT_TRUE(directory);
    directory_.emplace(std::move(*directory));
    auto pki = core::testing::MakeTestPki(directory_->path());
    ASSERT_TRUE(pki) << pki.error().ToString();
    pki_ = *pki;
    config_ = directory_->path() + "/operator.yaml";
    log_ = directory_->path() + "/operator.log";
    std::ofstream(config_) << "admin: {address: 127.0.0.1, port: 0}\n"
                           << "kubernetes: {kubeconfig: " << kubeconfig_path_ << "}\n"
                           << "sourcePolicy:\n"
                           << "  objectStores: [{buckets: [models], nodeCredentials: true}]\n"
                           << modelplane::testing::SignaturePolicyYaml(
                                  2, require_signatures_ ? std::vector<std::string>{namespace_}
                                                         : std::vector<std::string>{})
                           << "leaderElection: {enabled: false}\n"
                           << "controllers: {namespace: " << namespace_ << "}\n"
                           << "webhook: {enabled: true, address: 127.0.0.1, port: 0, "
                           << "certificateFile: " << pki_.server_certificate_file
                           << ", keyFile: " << pki_.server_key_file << "}\n";
    Launch();
    std::optional<int> port;
    ASSERT_TRUE(WaitUntil(
        [&] {
          port = core::testing::LoggedPort(ReadFile(log_), "webhook_listening");
          return port.has_value();
        },
        kWait))
        << ReadFile(log_);
    port_ = std::to_string(*port);
    InstallWebhookConfiguration();
  }

  void TearDown() override {
    if (client_) {
      (void)client_->Delete(kWebhookConfigurations, "", namespace_);
      (void)client_->Delete(kValidatingConfigurations, "", namespace_);
      (void)client_->Request("DELETE", "/api/v1/namespaces/" + namespace_ + "/pods", nullptr, "");
      if (!operator_.has_process()) Launch();  // revisions carry its finalizer
      (void)DeleteAllInNamespace(core::resources::ModelRevisions(), kWait);
    }
    StopOperator();
    for (const std::string& node : reported_nodes_) {
      (void)client_->Patch(core::resources::ModelCaches(), "", node, core::PatchType::kMerge,
                           {{"status", {{"revisions", json::array()}}}}, {.subresource = "status"});
    }
    ClusterTest::TearDown();
  }

  void Launch() {
    auto launched = ChildProcess::Start(
        {std::string(MODELPLANE_BINARY_DIR) + "/operator/modelplane-operator", "--config", config_},
        {.log_path = log_, .append_log = true});
    ASSERT_TRUE(launched) << launched.error().ToString();
    operator_ = std::move(*launched);
  }

  void StopOperator() { operator_.Stop(SIGKILL); }

  // As the chart installs it, but with a URL (the API server runs on this host) and only for
  // this test's namespace.
  void InstallWebhookConfiguration() {
    const json configuration = {
        {"apiVersion", "admissionregistration.k8s.io/v1"},
        {"kind", "MutatingWebhookConfiguration"},
        {"metadata", {{"name", namespace_}}},
        {"webhooks",
         json::array(
             {{{"name", "pods.modelplane.io"},
               {"admissionReviewVersions", {"v1"}},
               {"sideEffects", "None"},
               {"failurePolicy", "Fail"},
               {"timeoutSeconds", 5},
               {"reinvocationPolicy", "IfNeeded"},
               {"clientConfig",
                {{"url", "https://127.0.0.1:" + port_ + "/mutate-pods"},
                 {"caBundle", core::EncodeBase64(ReadFile(pki_.ca_file))}}},
               {"rules", json::array({{{"apiGroups", {""}},
                                       {"apiVersions", {"v1"}},
                                       {"operations", {"CREATE"}},
                                       {"resources", {"pods"}},
                                       {"scope", "Namespaced"}}})},
               {"namespaceSelector",
                {{"matchLabels", {{"kubernetes.io/metadata.name", namespace_}}}}},
               {"matchConditions",
                json::array({{{"name", "names-a-modelrevision"},
                              {"expression",
                               "has(object.metadata.annotations) && "
                               "'modelplane.io/revision' in object.metadata.annotations"}}})}}})}};
    auto created = client_->Create(kWebhookConfigurations, "", configuration);
    ASSERT_TRUE(created) << created.error().ToString();
    const json validating = {
        {"apiVersion", "admissionregistration.k8s.io/v1"},
        {"kind", "ValidatingWebhookConfiguration"},
        {"metadata", {{"name", namespace_}}},
        {"webhooks",
         json::array({{{"name", "modelrevisions.modelplane.io"},
                       {"admissionReviewVersions", {"v1"}},
                       {"sideEffects", "None"},
                       {"failurePolicy", "Fail"},
                       {"timeoutSeconds", 5},
                       {"clientConfig",
                        {{"url", "https://127.0.0.1:" + port_ + "/validate-modelrevisions"},
                         {"caBundle", core::EncodeBase64(ReadFile(pki_.ca_file))}}},
                       {"rules", json::array({{{"apiGroups", {"modelplane.io"}},
                                               {"apiVersions", {"v1alpha1"}},
                                               {"operations", {"CREATE"}},
                                               {"resources", {"modelrevisions"}},
                                               {"scope", "Namespaced"}}})},
                       {"namespaceSelector",
                        {{"matchLabels", {{"kubernetes.io/metadata.name", namespace_}}}}},
                       {"objectSelector",
                        {{"matchExpressions", json::array({{{"key", kAroundAdmission},
                                                            {"operator", "DoesNotExist"}}})}}}}})}};
    auto validating_created = client_->Create(kValidatingConfigurations, "", validating);
    ASSERT_TRUE(validating_created) << validating_created.error().ToString();
    // The API server picks up a new configuration a moment later: wait until a dry run of a
    // revision the policy refuses is refused by the webhook.
    json probe = Revision(namespace_, "probe");
    probe["spec"]["sources"] = json::array({{{"name", "nfs"},
                                             {"type", "sharedFilesystem"},
                                             {"sharedFilesystem", {{"path", "/probe"}}}}});
    const std::string path =
        "/apis/modelplane.io/v1alpha1/namespaces/" + namespace_ + "/modelrevisions?dryRun=All";
    ASSERT_TRUE(WaitUntil(
        [&] {
          auto answer = client_->Request("POST", path, probe, "application/json");
          return !answer && answer.error().message().find("modelplane:") != std::string::npos;
        },
        kWait))
        << ReadFile(log_);
  }

  // Creates a revision, retrying while the validating webhook is not served yet.
  core::Result<json> CreateRevision(const json& revision) {
    core::Result<json> created = core::MakeError(core::ErrorCode::kUnavailable, "not tried");
    WaitUntil(
        [&] {
          created = client_->Create(core::resources::ModelRevisions(), namespace_, revision);
          return created.has_value() ||
                 created.error().message().find("modelplane:") != std::string::npos;
        },
        kWait);
    return created;
  }

  // Creates a pod, retrying while the webhook is not up yet (the API server refuses then).
  core::Result<json> CreatePod(const json& pod, bool retry_until_served = true) {
    core::Result<json> created = core::MakeError(core::ErrorCode::kUnavailable, "not tried");
    WaitUntil(
        [&] {
          created = client_->Create(core::resources::Pods(), namespace_, pod);
          if (created || !retry_until_served) return true;
          const std::string& message = created.error().message();
          return message.find("not listed yet") == std::string::npos &&
                 message.find("connection refused") == std::string::npos;
        },
        kWait);
    return created;
  }

  // Waits until the webhook's informer has the revision: a dry run of a pod naming it is
  // refused (an invalid or revoked revision) or injected with its digest, not admitted as
  // "does not exist yet". A pod created right after its revision would otherwise race that
  // informer.
  bool WaitUntilTheWebhookSees(const std::string& revision) {
    const std::string path = "/api/v1/namespaces/" + namespace_ + "/pods?dryRun=All";
    return WaitUntil(
        [&] {
          auto answer = client_->Request("POST", path, ServingPod(namespace_, "probe", revision),
                                         "application/json");
          if (!answer)
            return answer.error().message().find("denied the request") != std::string::npos;
          return core::StringMember(*answer, {"metadata", "annotations", "modelplane.io/injected"})
                     .find("sha256:") != std::string::npos;
        },
        kWait);
  }

  // No ModelCache spec names the revision: the operator asked no node to stage it.
  void ExpectNoNodeAskedToStage(const std::string& revision) {
    auto caches = client_->ListAll(core::resources::ModelCaches(), "", {});
    ASSERT_TRUE(caches) << caches.error().ToString();
    for (const json& cache : caches->items) {
      for (const json& entry : cache["spec"].value("revisions", json::array())) {
        EXPECT_NE(entry["revision"].value("name", ""), revision) << cache.dump();
      }
    }
  }

  // Writes what the node's agent reports once it holds `digests` verified (with the proofs an
  // agent reports for revisions of the test's namespace it staged from their own sources).
  ::testing::AssertionResult ReportReady(const std::string& node,
                                         const std::vector<std::string>& digests) {
    json revisions = json::array();
    for (const std::string& digest : digests) {
      revisions.push_back(
          {{"digest", digest}, {"state", "Ready"}, {"bytesDone", 64}, {"bytesTotal", 64}});
    }
    reported_nodes_.insert(node);
    auto written =
        client_->Patch(core::resources::ModelCaches(), "", node, core::PatchType::kMerge,
                       {{"status",
                         {{"capacityBytes", 1LL << 40},
                          {"revisions", ::modelplane::testing::WithOwnSourceProofs(
                                            *client_, namespace_, std::move(revisions))}}}},
                       {.subresource = "status"});
    if (!written) return ::testing::AssertionFailure() << written.error().ToString();
    return ::testing::AssertionSuccess();
  }

  json GetPod(const std::string& name) {
    auto pod = client_->Get(core::resources::Pods(), namespace_, name);
    return pod ? *pod : json();
  }

  std::optional<core::testing::TemporaryDirectory> directory_;
  core::testing::TestPki pki_;
  std::string config_;
  std::string log_;
  std::string port_;
  ChildProcess operator_;
  std::set<std::string> reported_nodes_;  // whose ModelCache status the test wrote, cleared after
  bool require_signatures_ = false;       // the policy requires the test namespace's to be signed
};

}  // namespace modelplane::controller::webhook_testing
