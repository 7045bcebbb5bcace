// The peer-certificate flow against the real API server: a node agent's requester, holding a
// ServiceAccount token bound to a pod on its node, asks for its certificate with a real
// CertificateSigningRequest; the operator's signer approves and signs it, or denies requests
// whose requester, node binding or names do not hold. The API server writes the requester's
// identity and node into each request, so these are the checks a compromised agent meets.
#include <fstream>

#include <gtest/gtest.h>

#include "core/api/peer_identity.h"
#include "core/kube/resource_type.h"
#include "core/pki/certificate_authority.h"
#include "core/pki/certificate_info.h"
#include "node-agent/peer/peer_certificate_requester.h"
#include "operator/certificates/peer_certificate_signer.h"
#include "tests/core/http/test_certificates.h"
#include "tests/core/kube/cluster/cluster_fixture.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

core::ResourceType ServiceAccounts() {
  return {"", "v1", "serviceaccounts", "ServiceAccount", true};
}
core::ResourceType ClusterRoles() {
  return {"rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false};
}
core::ResourceType ClusterRoleBindings() {
  return {"rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", false};
}

class PeerCertificatesClusterTest : public core::testing::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto directory = core::testing::TemporaryDirectory::Create("peer-certificates-");
    ASSERT_TRUE(directory);
    directory_.emplace(std::move(*directory));
    suffix_ = std::to_string(::getpid() % 100000) + "-" + std::to_string(++counter_);
    node_ = "mp-cert-node-" + suffix_;
    other_node_ = "mp-cert-other-" + suffix_;
    for (const std::string& node : {node_, other_node_}) CreateNode(node);
    for (const char* account : {"node-agent", "intruder"}) {
      ASSERT_TRUE(client_->Create(
          ServiceAccounts(), namespace_,
          {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", account}}}}));
    }
    // Both accounts may ask for certificates (as the chart lets the agent): the signer, not
    // RBAC, is what refuses the intruder.
    role_ = "mp-cert-requester-" + suffix_;
    ASSERT_TRUE(client_->Create(ClusterRoles(), "",
                                {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                                 {"kind", "ClusterRole"},
                                 {"metadata", {{"name", role_}}},
                                 {"rules",
                                  {{{"apiGroups", {"certificates.k8s.io"}},
                                    {"resources", {"certificatesigningrequests"}},
                                    {"verbs", {"create", "get"}}}}}}));
    ASSERT_TRUE(client_->Create(
        ClusterRoleBindings(), "",
        {{"apiVersion", "rbac.authorization.k8s.io/v1"},
         {"kind", "ClusterRoleBinding"},
         {"metadata", {{"name", role_}}},
         {"roleRef",
          {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role_}}},
         {"subjects",
          {{{"kind", "ServiceAccount"}, {"name", "node-agent"}, {"namespace", namespace_}},
           {{"kind", "ServiceAccount"}, {"name", "intruder"}, {"namespace", namespace_}}}}}));

    auto authority = core::CertificateAuthority::Generate("test peer CA",
                                                          std::chrono::system_clock::now() + 48h);
    ASSERT_TRUE(authority);
    ca_file_ = directory_->path() + "/ca.crt";
    ca_key_file_ = directory_->path() + "/ca.key";
    std::ofstream(ca_file_) << authority->certificate_pem();
    std::ofstream(ca_key_file_) << authority->private_key_pem();
    auto signer = PeerCertificateSigner::Create(
        *client_, *watcher_,
        {.policy = {.agent_username = "system:serviceaccount:" + namespace_ + ":node-agent",
                    .max_lifetime = 24h},
         .ca_certificate_file = ca_file_,
         .ca_key_file = ca_key_file_},
        logger_, clock_);
    ASSERT_TRUE(signer) << signer.error().ToString();
    signer_ = std::move(*signer);
    signer_->Start();
  }

  void TearDown() override {
    if (signer_) signer_->Stop();
    if (client_) {
      for (const std::string& node : {node_, other_node_}) {
        (void)client_->Delete(core::resources::Nodes(), "", node);
      }
      (void)client_->Delete(ClusterRoleBindings(), "", role_);
      (void)client_->Delete(ClusterRoles(), "", role_);
    }
    ClusterTest::TearDown();
  }

  // A Node no kubelet or KWOK manages, listing one InternalIP.
  void CreateNode(const std::string& name) {
    auto created =
        client_->Create(core::resources::Nodes(), "",
                        {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}});
    ASSERT_TRUE(created) << created.error().ToString();
    auto patched = client_->Request(
        "PATCH", core::resources::Nodes().Path("", name, "status"),
        {{"status", {{"addresses", {{{"type", "InternalIP"}, {"address", "10.77.0.1"}}}}}}},
        "application/merge-patch+json");
    ASSERT_TRUE(patched) << patched.error().ToString();
  }

  // A token of `account`, bound to a new pod on `node` unless `node` is empty.
  std::string Token(const std::string& account, const std::string& node) {
    json spec = {{"expirationSeconds", 3600}};
    if (!node.empty()) {
      const std::string pod = "agent-" + std::to_string(++pods_);
      auto created = client_->Create(
          core::resources::Pods(), namespace_,
          {{"apiVersion", "v1"},
           {"kind", "Pod"},
           {"metadata", {{"name", pod}}},
           {"spec",
            {{"nodeName", node},
             {"serviceAccountName", account},
             {"automountServiceAccountToken", false},
             {"containers", {{{"name", "agent"}, {"image", "modelplane-node-agent"}}}}}}});
      EXPECT_TRUE(created) << created.error().ToString();
      if (!created) return {};
      spec["boundObjectRef"] = {{"apiVersion", "v1"},
                                {"kind", "Pod"},
                                {"name", pod},
                                {"uid", (*created)["metadata"]["uid"]}};
    }
    auto token = client_->Request(
        "POST", "/api/v1/namespaces/" + namespace_ + "/serviceaccounts/" + account + "/token",
        {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", spec}},
        "application/json");
    EXPECT_TRUE(token) << token.error().ToString();
    return token ? (*token)["status"]["token"].get<std::string>() : std::string();
  }

  std::unique_ptr<core::KubeClient> ClientWithToken(const std::string& token) {
    core::KubeConfig config = config_;
    config.client_certificate_pem.clear();
    config.client_key_pem.clear();
    config.token = core::TokenSource::Fixed(token);
    auto client = core::KubeClient::Create(config, {}, clock_);
    EXPECT_TRUE(client) << client.error().ToString();
    return client ? std::move(*client) : nullptr;
  }

  core::Result<agent::PeerCertificate> Request(core::KubeClient& client, const std::string& node,
                                               const std::string& subdirectory) {
    agent::PeerCertificateRequester requester(client,
                                              {.node_name = node,
                                               .directory = directory_->path() + "/" + subdirectory,
                                               .ip_addresses = {"10.77.0.1", "192.0.2.9"},
                                               .requested_lifetime = 48h,
                                               .poll_interval = 100ms,
                                               .wait_timeout = 20s},
                                              logger_, clock_);
    return requester.Ensure(cancel_);
  }

  static inline int counter_ = 0;
  int pods_ = 0;
  std::optional<core::testing::TemporaryDirectory> directory_;
  std::string suffix_;
  std::string node_;
  std::string other_node_;
  std::string role_;
  std::string ca_file_;
  std::string ca_key_file_;
  core::Logger logger_ = *core::Logger::Create({.component = "peer-certificates-test"});
  core::CancellationToken cancel_;
  std::unique_ptr<PeerCertificateSigner> signer_;
};

TEST_F(PeerCertificatesClusterTest, AnAgentGetsACertificateOfItsOwnNodeAndItsOwnKey) {
  auto client = ClientWithToken(Token("node-agent", node_));
  ASSERT_TRUE(client);
  auto issued = Request(*client, node_, "agent");
  ASSERT_TRUE(issued) << issued.error().ToString();
  std::ifstream file(issued->file);
  const std::string pem((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  auto info = core::ReadCertificateInfo(pem);
  ASSERT_TRUE(info) << info.error().ToString();
  EXPECT_EQ(info->names.dns_names, std::vector<std::string>{core::api::PeerIdentityName(node_)});
  // The address the Node lists is kept; the one it does not list is left out.
  EXPECT_EQ(info->names.ip_addresses, std::vector<std::string>{"10.77.0.1"});
  // The signer's cap (24 h), not the 48 h asked for.
  EXPECT_LE(info->not_after - info->not_before, 24h + 6min);
  // A second call (a restart) reuses the certificate on disk: no new request.
  auto again = Request(*client, node_, "agent");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->not_after, issued->not_after);
}

TEST_F(PeerCertificatesClusterTest, AnAgentAskingForAnotherNodesIdentityIsDenied) {
  auto client = ClientWithToken(Token("node-agent", node_));
  ASSERT_TRUE(client);
  auto issued = Request(*client, other_node_, "impostor");
  ASSERT_FALSE(issued);
  EXPECT_EQ(issued.error().code(), core::ErrorCode::kPermissionDenied);
  EXPECT_NE(issued.error().message().find("NameNotOfRequesterNode"), std::string::npos)
      << issued.error().message();
}

TEST_F(PeerCertificatesClusterTest, ATokenNotBoundToAPodIsDenied) {
  auto client = ClientWithToken(Token("node-agent", ""));
  ASSERT_TRUE(client);
  auto issued = Request(*client, node_, "unbound");
  ASSERT_FALSE(issued);
  EXPECT_NE(issued.error().message().find("TokenNotBoundToNode"), std::string::npos)
      << issued.error().message();
}

TEST_F(PeerCertificatesClusterTest, AnotherServiceAccountIsDeniedEvenOnItsOwnNode) {
  auto client = ClientWithToken(Token("intruder", node_));
  ASSERT_TRUE(client);
  auto issued = Request(*client, node_, "intruder");
  ASSERT_FALSE(issued);
  EXPECT_NE(issued.error().message().find("RequesterNotNodeAgent"), std::string::npos)
      << issued.error().message();
}

}  // namespace
}  // namespace modelplane::controller
