#include "operator/certificates/peer_certificate_policy.h"

#include <gtest/gtest.h>

#include "core/api/peer_identity.h"
#include "core/pki/private_key.h"
#include "core/text/base64.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;
using Verdict = PeerCertificateDecision::Verdict;
using namespace std::chrono_literals;

// NOLINTNEXTLINE(cert-err58-cpp): a test constant; an allocation failure here ends the test.
const PeerCertificatePolicy kPolicy{
    .agent_username = "system:serviceaccount:modelplane-system:modelplane-node-agent",
    .max_lifetime = 24h * 7};

json RequestFor(const core::CertificateNames& names, const std::string& node = "gpu-1") {
  auto key = core::PrivateKey::Generate();
  EXPECT_TRUE(key);
  auto pem = core::MakeCertificateRequestPem(*key, names);
  EXPECT_TRUE(pem) << pem.error().ToString();
  return {{"metadata", {{"name", "modelplane-peer-" + node + "-0123"}}},
          {"spec",
           {{"signerName", "modelplane.io/peer"},
            {"request", core::EncodeBase64(*pem)},
            {"username", kPolicy.agent_username},
            {"extra", {{"authentication.kubernetes.io/node-name", {node}}}},
            {"usages", {"digital signature", "server auth", "client auth"}},
            {"expirationSeconds", 3600}}}};
}

json NodeWithAddresses(std::initializer_list<std::string> addresses) {
  json node = {{"metadata", {{"name", "gpu-1"}}}, {"status", {{"addresses", json::array()}}}};
  for (const std::string& address : addresses) {
    node["status"]["addresses"].push_back({{"type", "InternalIP"}, {"address", address}});
  }
  return node;
}

TEST(PeerCertificatePolicyTest, IssuesTheNodesIdentityAndOnlyTheAddressesTheNodeLists) {
  const json request = RequestFor({.dns_names = {core::api::PeerIdentityName("gpu-1")},
                                   .ip_addresses = {"10.0.0.7", "10.9.9.9"}});
  EXPECT_EQ(DecidePeerCertificate(request, nullptr, kPolicy).verdict, Verdict::kNeedsNode);
  const json node = NodeWithAddresses({"10.0.0.7"});
  const PeerCertificateDecision decision = DecidePeerCertificate(request, &node, kPolicy);
  ASSERT_EQ(decision.verdict, Verdict::kIssue) << decision.message;
  EXPECT_EQ(decision.node_name, "gpu-1");
  EXPECT_EQ(decision.names.dns_names, std::vector<std::string>{"gpu-1.peer.modelplane.invalid"});
  EXPECT_EQ(decision.names.ip_addresses, std::vector<std::string>{"10.0.0.7"});
  EXPECT_EQ(decision.left_out_addresses, std::vector<std::string>{"10.9.9.9"});
  EXPECT_EQ(decision.lifetime, 3600s);
}

TEST(PeerCertificatePolicyTest, DeniesRequestersThatAreNotTheAgentOrNotBoundToANode) {
  json request = RequestFor({.dns_names = {core::api::PeerIdentityName("gpu-1")}});
  const json node = NodeWithAddresses({});
  json other_user = request;
  other_user["spec"]["username"] = "system:serviceaccount:tenant:default";
  EXPECT_EQ(DecidePeerCertificate(other_user, &node, kPolicy).reason, "RequesterNotNodeAgent");
  json unbound = request;
  unbound["spec"].erase("extra");
  EXPECT_EQ(DecidePeerCertificate(unbound, &node, kPolicy).reason, "TokenNotBoundToNode");
  json two_nodes = request;
  two_nodes["spec"]["extra"]["authentication.kubernetes.io/node-name"] = {"gpu-1", "gpu-2"};
  EXPECT_EQ(DecidePeerCertificate(two_nodes, &node, kPolicy).reason, "TokenNotBoundToNode");
}

TEST(PeerCertificatePolicyTest, DeniesAnotherNodesIdentityExtraNamesAndUsages) {
  const json node = NodeWithAddresses({});
  // The token says gpu-1; the request asks to be gpu-2.
  const json impostor = RequestFor({.dns_names = {core::api::PeerIdentityName("gpu-2")}});
  const PeerCertificateDecision denied = DecidePeerCertificate(impostor, &node, kPolicy);
  EXPECT_EQ(denied.verdict, Verdict::kDeny);
  EXPECT_EQ(denied.reason, "NameNotOfRequesterNode");
  const json extra_name =
      RequestFor({.dns_names = {core::api::PeerIdentityName("gpu-1"), "kubernetes.default.svc"}});
  EXPECT_EQ(DecidePeerCertificate(extra_name, &node, kPolicy).reason, "NameNotOfRequesterNode");
  json signing = RequestFor({.dns_names = {core::api::PeerIdentityName("gpu-1")}});
  signing["spec"]["usages"].push_back("cert sign");
  EXPECT_EQ(DecidePeerCertificate(signing, &node, kPolicy).reason, "UsageNotAllowed");
  json garbage = RequestFor({});
  garbage["spec"]["request"] = core::EncodeBase64("-----BEGIN CERTIFICATE REQUEST-----\nx\n");
  EXPECT_EQ(DecidePeerCertificate(garbage, &node, kPolicy).reason, "MalformedRequest");
}

TEST(PeerCertificatePolicyTest, IgnoresOtherSignersAndDecidedRequestsAndCapsTheLifetime) {
  const json node = NodeWithAddresses({});
  json other = RequestFor({});
  other["spec"]["signerName"] = "kubernetes.io/kubelet-serving";
  EXPECT_EQ(DecidePeerCertificate(other, &node, kPolicy).verdict, Verdict::kIgnore);
  json issued = RequestFor({});
  issued["status"]["certificate"] = "LS0t";
  EXPECT_EQ(DecidePeerCertificate(issued, &node, kPolicy).verdict, Verdict::kIgnore);
  json denied = RequestFor({});
  denied["status"]["conditions"] = {{{"type", "Denied"}, {"status", "True"}}};
  EXPECT_EQ(DecidePeerCertificate(denied, &node, kPolicy).verdict, Verdict::kIgnore);
  json long_lived = RequestFor({.dns_names = {core::api::PeerIdentityName("gpu-1")}});
  long_lived["spec"]["expirationSeconds"] = 3600 * 24 * 365;
  EXPECT_EQ(DecidePeerCertificate(long_lived, &node, kPolicy).lifetime, 24h * 7);
  long_lived["spec"]["expirationSeconds"] = 5;
  EXPECT_EQ(DecidePeerCertificate(long_lived, &node, kPolicy).lifetime, 600s);
}

}  // namespace
}  // namespace modelplane::controller
