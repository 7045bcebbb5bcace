// The credentials endpoint against the real API server: real TokenReviews of real pod-bound
// ServiceAccount tokens (the TokenRequest API, as kubelet's projected volume makes them), real
// ModelCaches, ModelRevisions and Secrets, the operator's CredentialsService on a TLS server and
// the agent's own client (OperatorCredentials) asking it.
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config/config_loader.h"
#include "core/http/http_server.h"
#include "core/kube/resource_type.h"
#include "node-agent/sources/operator_credentials.h"
#include "operator/credentials/credentials_service.h"
#include "tests/core/http/test_certificates.h"
#include "tests/core/kube/cluster/cluster_fixture.h"

namespace modelplane::controller {
namespace {

using core::ErrorCode;
using nlohmann::json;
using ::testing::HasSubstr;

constexpr std::string_view kAudience = "modelplane-operator";
core::ResourceType ServiceAccounts() {
  return {"", "v1", "serviceaccounts", "ServiceAccount", true};
}
core::ResourceType Secrets() {
  return {"", "v1", "secrets", "Secret", true};
}

json Revision(const std::string& name, const std::string& secret,
              const std::string& secret_namespace = "") {
  json ref = {{"name", secret}};
  if (!secret_namespace.empty()) ref["namespace"] = secret_namespace;
  return {{"apiVersion", "modelplane.io/v1alpha1"},
          {"kind", "ModelRevision"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"modelName", "test"},
            {"repositoryRevision", "r1"},
            {"format", "safetensors"},
            {"engine", {{"name", "vllm"}, {"version", "0.11.0"}}},
            {"files",
             {{{"path", "model.safetensors"},
               {"size", 8},
               {"sha256", "sha256:" + std::string(64, 'a')},
               {"role", "weights"}}}},
            {"sources",
             {{{"name", "s3"},
               {"type", "objectStore"},
               {"objectStore", {{"endpoint", "http://minio.example:9000"}, {"bucket", "models"}}},
               {"credentialsSecretRef", ref}}}}}}};
}

json KeySecret(const std::string& name, const std::string& access_key) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata", {{"name", name}}},
      {"stringData", {{"accessKeyId", access_key}, {"secretAccessKey", access_key + "-secret"}}}};
}

class CredentialsClusterTest : public core::testing::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!ModelplaneCrdsInstalled()) GTEST_SKIP() << core::testing::kModelplaneCrdsMissing;
    auto nodes = client_->List(core::resources::Nodes(), "", {.label_selector = "type=kwok"});
    ASSERT_TRUE(nodes) << nodes.error().ToString();
    ASSERT_GE(nodes->items.size(), 2u) << "needs two KWOK nodes (e2e/cluster.sh up)";
    node_a_ = nodes->items[0]["metadata"]["name"].get<std::string>();
    node_b_ = nodes->items[1]["metadata"]["name"].get<std::string>();
    other_namespace_ = namespace_ + "-b";
    ASSERT_TRUE(client_->Create(
        core::resources::Namespaces(), "",
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", other_namespace_}}}}));
    auto directory = core::testing::TemporaryDirectory::Create("credentials");
    ASSERT_TRUE(directory);
    directory_.emplace(std::move(*directory));

    // The agent's identity: its ServiceAccount and a pod on each of two nodes.
    for (const char* account : {"node-agent", "someone-else"}) {
      ASSERT_TRUE(client_->Create(
          ServiceAccounts(), namespace_,
          {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", account}}}}));
    }
    ASSERT_NO_FATAL_FAILURE(CreatePod("agent-a", node_a_, "node-agent"));
    ASSERT_NO_FATAL_FAILURE(CreatePod("agent-b", node_b_, "node-agent"));
    ASSERT_NO_FATAL_FAILURE(CreatePod("impostor-a", node_a_, "someone-else"));

    // Tenant A's revisions: one with its own Secret, one naming tenant B's Secret without a rule,
    // one naming the Secret of tenant B's that the policy lends tenant A.
    ASSERT_TRUE(
        client_->Create(core::resources::ModelRevisions(), namespace_, Revision("own", "a-keys")));
    ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                                Revision("foreign", "b-keys", other_namespace_)));
    ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                                Revision("lent", "lent-keys", other_namespace_)));
    ASSERT_TRUE(client_->Create(Secrets(), namespace_, KeySecret("a-keys", "AKIA-A")));
    ASSERT_TRUE(client_->Create(Secrets(), other_namespace_, KeySecret("b-keys", "AKIA-B")));
    ASSERT_TRUE(client_->Create(Secrets(), other_namespace_, KeySecret("lent-keys", "AKIA-L")));
    // Node A is asked to hold all three; node B none.
    ASSERT_NO_FATAL_FAILURE(SetCache(node_a_, {"own", "foreign", "lent"}));
    ASSERT_NO_FATAL_FAILURE(SetCache(node_b_, {}));

    auto policy = core::LoadConfigString<core::SourcePolicy>(
        "objectStores: [{endpoint: \"http://minio.example:9000\", buckets: [models]}]\n"
        "credentials: [{secret: lent-keys, secretNamespace: " +
        other_namespace_ + ", namespaces: [" + namespace_ + "]}]\n");
    ASSERT_TRUE(policy) << policy.error().ToString();
    policy_ = *policy;
    auto logger = core::Logger::Create({.component = "operator.credentials"});
    ASSERT_TRUE(logger);
    auto service =
        CredentialsService::Create(*client_,
                                   {.audience = std::string(kAudience),
                                    .agent = {.namespace_name = namespace_, .name = "node-agent"},
                                    .policy = &policy_},
                                   *logger, metrics_);
    ASSERT_TRUE(service) << service.error().ToString();
    service_ = std::move(*service);
    auto pki = core::testing::MakeTestPki(directory_->path() + "/pki");
    ASSERT_TRUE(pki) << pki.error().ToString();
    ca_file_ = pki->ca_file;
    core::ServerOptions options;
    options.tls = core::TlsServerOptions{.certificate_chain_file = pki->server_certificate_file,
                                         .private_key_file = pki->server_key_file};
    core::Router router;
    service_->AddRoutes(router);
    auto server = core::HttpServer::Create(std::move(options), std::move(router));
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
  }

  void TearDown() override {
    if (server_) server_->Stop();
    if (client_) {
      for (const std::string& node : {node_a_, node_b_}) {
        if (!node.empty()) (void)client_->Delete(core::resources::ModelCaches(), "", node);
      }
      if (!other_namespace_.empty()) {
        (void)client_->Delete(core::resources::Namespaces(), "", other_namespace_);
      }
    }
    ClusterTest::TearDown();
  }

  void CreatePod(const std::string& name, const std::string& node, const std::string& account) {
    auto pod = client_->Create(
        core::resources::Pods(), namespace_,
        {{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata", {{"name", name}}},
         {"spec",
          {{"nodeName", node},
           {"serviceAccountName", account},
           {"automountServiceAccountToken", false},
           {"tolerations", {{{"operator", "Exists"}}}},
           {"containers", {{{"name", "agent"}, {"image", "modelplane-node-agent:test"}}}}}}});
    ASSERT_TRUE(pod) << pod.error().ToString();
    pod_uids_[name] = (*pod)["metadata"]["uid"].get<std::string>();
  }

  void SetCache(const std::string& node, const std::vector<std::string>& revisions) {
    (void)client_->Delete(core::resources::ModelCaches(), "", node);
    json entries = json::array();
    for (const std::string& name : revisions) {
      entries.push_back({{"revision", {{"namespace", namespace_}, {"name", name}}},
                         {"digest", "sha256:" + std::string(64, 'b')}});
    }
    json cache = {{"apiVersion", "modelplane.io/v1alpha1"},
                  {"kind", "ModelCache"},
                  {"metadata", {{"name", node}}},
                  {"spec", {{"revisions", entries}}}};
    // The delete above may still be finishing.
    ASSERT_TRUE(core::testing::WaitUntil(
        [&] { return client_->Create(core::resources::ModelCaches(), "", cache).has_value(); },
        std::chrono::seconds(30)));
  }

  // A token of `account` for `audience`, bound to `pod` when given (TokenRequest, as kubelet
  // asks for a projected volume), written to a file as the volume holds it.
  std::string TokenFile(const std::string& account, const std::string& pod,
                        std::string_view audience = kAudience) {
    json spec = {{"audiences", {std::string(audience)}}, {"expirationSeconds", 600}};
    if (!pod.empty()) {
      spec["boundObjectRef"] = {
          {"kind", "Pod"}, {"apiVersion", "v1"}, {"name", pod}, {"uid", pod_uids_.at(pod)}};
    }
    auto answer = client_->Request(
        "POST", "/api/v1/namespaces/" + namespace_ + "/serviceaccounts/" + account + "/token",
        {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", spec}},
        "application/json");
    EXPECT_TRUE(answer) << answer.error().ToString();
    if (!answer) return "";
    std::string path = directory_->path() + "/token-" + std::to_string(next_token_++);
    std::ofstream(path) << (*answer)["status"]["token"].get<std::string>();
    return path;
  }

  std::unique_ptr<agent::OperatorCredentials> AgentClient(const std::string& token_file) {
    auto client = agent::OperatorCredentials::Create(
        {.url = "https://127.0.0.1:" + std::to_string(server_->port()),
         .token_file = token_file,
         .ca_file = ca_file_},
        *core::Logger::Create({.component = "agent.credentials"}));
    EXPECT_TRUE(client) << client.error().ToString();
    return client ? std::move(*client) : nullptr;
  }

  std::string node_a_;
  std::string node_b_;
  std::string other_namespace_;
  std::optional<core::testing::TemporaryDirectory> directory_;
  std::map<std::string, std::string> pod_uids_;
  int next_token_ = 0;
  core::SourcePolicy policy_;
  core::MetricsRegistry metrics_;
  std::unique_ptr<CredentialsService> service_;
  std::unique_ptr<core::HttpServer> server_;
  std::string ca_file_;
};

TEST_F(CredentialsClusterTest, ANodeGetsOnlyTheSecretsOfRevisionsItStages) {
  auto on_a = AgentClient(TokenFile("node-agent", "agent-a"));
  ASSERT_NE(on_a, nullptr);
  // Node A holds "own", which names its namespace's Secret.
  auto own = on_a->Read(namespace_, "a-keys", false);
  ASSERT_TRUE(own) << own.error().ToString();
  EXPECT_EQ(own->access_key_id, "AKIA-A");
  EXPECT_EQ(own->secret_access_key, "AKIA-A-secret");

  // Node B's agent, same ServiceAccount: its node is asked to hold nothing.
  auto on_b = AgentClient(TokenFile("node-agent", "agent-b"));
  ASSERT_NE(on_b, nullptr);
  auto refused = on_b->Read(namespace_, "a-keys", false);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_FALSE(refused.error().retryable());
  EXPECT_THAT(refused.error().message(), HasSubstr("no revision this node's ModelCache names"));
  EXPECT_THAT(refused.error().message(), ::testing::Not(HasSubstr("AKIA")));

  // Once node B is asked to hold "own", it gets the Secret too.
  ASSERT_NO_FATAL_FAILURE(SetCache(node_b_, {"own"}));
  auto assigned = on_b->Read(namespace_, "a-keys", true);
  ASSERT_TRUE(assigned) << assigned.error().ToString();
  EXPECT_EQ(assigned->access_key_id, "AKIA-A");
}

TEST_F(CredentialsClusterTest, AHubSourcesTokenGoesToTheNodesThatStageFromIt) {
  json hub = Revision("hub", "hf-token");
  hub["spec"]["sources"] = json::array(
      {{{"name", "hub"},
        {"type", "huggingFace"},
        {"huggingFace", {{"repository", "org/model"}, {"commit", std::string(40, 'c')}}},
        {"credentialsSecretRef", {{"name", "hf-token"}}}}});
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_, hub));
  ASSERT_TRUE(client_->Create(Secrets(), namespace_,
                              {{"apiVersion", "v1"},
                               {"kind", "Secret"},
                               {"metadata", {{"name", "hf-token"}}},
                               {"stringData", {{"HF_TOKEN", "hf_secret\n"}}}}));
  auto policy = core::LoadConfigString<core::SourcePolicy>(
      "hubs: [{endpoint: \"https://huggingface.co\"}]\n");
  ASSERT_TRUE(policy) << policy.error().ToString();
  policy_ = *policy;
  ASSERT_NO_FATAL_FAILURE(SetCache(node_a_, {"hub"}));
  auto on_a = AgentClient(TokenFile("node-agent", "agent-a"));
  ASSERT_NE(on_a, nullptr);
  auto token = on_a->ReadToken(namespace_, "hf-token", false);
  ASSERT_TRUE(token) << token.error().ToString();
  EXPECT_EQ(*token, "hf_secret");
  // The same Secret holds no object-store keys.
  auto keys = on_a->Read(namespace_, "hf-token", false);
  ASSERT_FALSE(keys);
  EXPECT_EQ(keys.error().code(), ErrorCode::kUnauthenticated);
  // Node B stages nothing from the hub: no token.
  auto on_b = AgentClient(TokenFile("node-agent", "agent-b"));
  ASSERT_NE(on_b, nullptr);
  auto refused = on_b->ReadToken(namespace_, "hf-token", false);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kPermissionDenied);
}

TEST_F(CredentialsClusterTest, AnotherNamespacesSecretOnlyWithAPolicyRule) {
  auto on_a = AgentClient(TokenFile("node-agent", "agent-a"));
  ASSERT_NE(on_a, nullptr);
  // "foreign" names tenant B's b-keys, and node A holds it, but no rule lends b-keys.
  auto foreign = on_a->Read(other_namespace_, "b-keys", false);
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().code(), ErrorCode::kPermissionDenied);
  // "lent" names lent-keys, which the rule lends tenant A.
  auto lent = on_a->Read(other_namespace_, "lent-keys", false);
  ASSERT_TRUE(lent) << lent.error().ToString();
  EXPECT_EQ(lent->access_key_id, "AKIA-L");
  // A Secret no revision names, in the revision's own namespace.
  ASSERT_TRUE(client_->Create(Secrets(), namespace_, KeySecret("admin-keys", "AKIA-X")));
  auto unnamed = on_a->Read(namespace_, "admin-keys", false);
  ASSERT_FALSE(unnamed);
  EXPECT_EQ(unnamed.error().code(), ErrorCode::kPermissionDenied);
}

TEST_F(CredentialsClusterTest, TokensNotBoundToAnAgentPodAreRefused) {
  // The agent's ServiceAccount, but a token bound to no pod: no node to speak for.
  auto unbound = AgentClient(TokenFile("node-agent", ""));
  ASSERT_NE(unbound, nullptr);
  auto no_node = unbound->Read(namespace_, "a-keys", false);
  ASSERT_FALSE(no_node);
  EXPECT_EQ(no_node.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(no_node.error().message(), HasSubstr("not bound to a pod"));

  // Another ServiceAccount's token, bound to a pod on node A.
  auto impostor = AgentClient(TokenFile("someone-else", "impostor-a"));
  ASSERT_NE(impostor, nullptr);
  auto not_agent = impostor->Read(namespace_, "a-keys", false);
  ASSERT_FALSE(not_agent);
  EXPECT_EQ(not_agent.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(not_agent.error().message(), HasSubstr("not the node agent's ServiceAccount"));

  // The agent's pod-bound token, but for the API server's audience, not the operator's.
  auto api_audience =
      AgentClient(TokenFile("node-agent", "agent-a", "https://kubernetes.default.svc"));
  ASSERT_NE(api_audience, nullptr);
  auto wrong_audience = api_audience->Read(namespace_, "a-keys", false);
  ASSERT_FALSE(wrong_audience);
  EXPECT_EQ(wrong_audience.error().code(), ErrorCode::kUnauthenticated);

  // A token bound to a pod that was deleted stops working at once: the API server's own review
  // keeps accepting it for a while, so the endpoint reads the pod itself.
  const std::string token = TokenFile("node-agent", "agent-a");
  auto before = AgentClient(token)->Read(namespace_, "a-keys", false);
  ASSERT_TRUE(before) << before.error().ToString();
  ASSERT_TRUE(
      client_->Delete(core::resources::Pods(), namespace_, "agent-a", {.grace_period_seconds = 0}));
  ASSERT_TRUE(core::testing::WaitUntil(
      [&] {
        auto pod = core::GetOrNull(*client_, core::resources::Pods(), namespace_, "agent-a");
        return pod && pod->is_null();
      },
      std::chrono::seconds(30)));
  auto after = AgentClient(token)->Read(namespace_, "a-keys", false);
  ASSERT_FALSE(after) << "a deleted pod's token was served a Secret";
  EXPECT_EQ(after.error().code(), ErrorCode::kUnauthenticated);
  // A new pod of the same name on the same node does not revive the old pod's token.
  ASSERT_NO_FATAL_FAILURE(CreatePod("agent-a", node_a_, "node-agent"));
  auto revived = AgentClient(token)->Read(namespace_, "a-keys", false);
  ASSERT_FALSE(revived) << "a replaced pod's token was served a Secret";
  EXPECT_EQ(revived.error().code(), ErrorCode::kUnauthenticated);
}

// At most max_in_flight requests hold a webhook thread; the rest are told to come back at once,
// before any TokenReview, and the agent's client takes that as retryable.
TEST_F(CredentialsClusterTest, RequestsPastTheBoundAreToldToRetry) {
  auto logger = core::Logger::Create({.component = "operator.credentials"});
  ASSERT_TRUE(logger);
  core::MetricsRegistry metrics;
  auto saturated =
      CredentialsService::Create(*client_,
                                 {.audience = std::string(kAudience),
                                  .agent = {.namespace_name = namespace_, .name = "node-agent"},
                                  .policy = &policy_,
                                  .max_in_flight = 0},
                                 *logger, metrics);
  ASSERT_TRUE(saturated) << saturated.error().ToString();
  core::ServerRequest request;
  request.path = "/credentials/v1/" + namespace_ + "/a-keys";
  request.target = request.path;
  request.headers.set(boost::beast::http::field::authorization, "Bearer not-even-reviewed");
  const core::ServerResponse busy = (*saturated)->Handle(request);
  EXPECT_EQ(busy.status, boost::beast::http::status::service_unavailable);
  EXPECT_EQ(busy.headers[boost::beast::http::field::retry_after], "1");
  // The bound is released after each call: the real service still answers.
  auto on_a = AgentClient(TokenFile("node-agent", "agent-a"));
  ASSERT_NE(on_a, nullptr);
  EXPECT_TRUE(on_a->Read(namespace_, "a-keys", false));
}

}  // namespace
}  // namespace modelplane::controller
