// What the operator's peer-certificate signer does with one CertificateSigningRequest for
// signer modelplane.io/peer: nothing (not its signer, or already decided), deny it (with a
// fixed reason), read the Node first (everything else passed), or issue a certificate with the
// names it decided. Pure: the signer (peer_certificate_signer.h) applies the decision.
//
// A certificate is issued only when
//   - the requester is the node agent's ServiceAccount (the API server writes spec.username
//     from the requester's credentials; nobody can set it),
//   - its token is bound to a pod on a node (spec.extra's authentication.kubernetes.io/
//     node-name, also written by the API server), and that node is who the certificate names:
//     a compromised agent can get a certificate for its own node only,
//   - the request verifies with its own key, asks for no DNS name but its node's identity and
//     for no usage beyond TLS server and client.
// Requested IP addresses go into the certificate only when the Node object lists them; others
// are left out, not refused (the agent advertises what its pod sees, which a Node may not
// list, and clients check the identity name, not the address).
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/pki/certificate_request.h"

namespace modelplane::controller {

struct PeerCertificatePolicy {
  std::string agent_username;  // "system:serviceaccount:<namespace>:<name>"
  std::chrono::seconds max_lifetime{std::chrono::hours(24 * 7)};
};

struct PeerCertificateDecision {
  enum class Verdict { kIgnore, kDeny, kNeedsNode, kIssue };
  Verdict verdict = Verdict::kIgnore;
  std::string reason;   // kDeny: a fixed CamelCase code for the Denied condition
  std::string message;  // kDeny and kIssue: for people (the condition's message, the log)
  std::string node_name;
  core::CertificateNames names;  // kIssue
  std::chrono::seconds lifetime{0};
  std::vector<std::string> left_out_addresses;  // requested, not on the Node
};

// `node`: the Node named by the requester's token, null when not read yet (kNeedsNode).
[[nodiscard]] PeerCertificateDecision DecidePeerCertificate(const nlohmann::json& request,
                                                            const nlohmann::json* node,
                                                            const PeerCertificatePolicy& policy);

// The parsed PKCS#10 request of a CertificateSigningRequest object (spec.request, base64 PEM).
[[nodiscard]] core::Result<core::CertificateRequest> ReadCertificateRequest(
    const nlohmann::json& request);

}  // namespace modelplane::controller
