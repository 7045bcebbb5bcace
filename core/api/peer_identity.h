// How a node agent's peer certificate names its node: the contract between the agent that asks
// for it (a CertificateSigningRequest), the operator that signs it and the peers that check it.
//
// A peer is dialed by the address its ModelCache advertises but identified by its node: the
// certificate carries the DNS name PeerIdentityName(node), which no resolver answers (.invalid,
// RFC 2606), and a client verifies that name, not the address (several agents may share one,
// and an address moves between nodes). The signer puts only that name, and addresses the Node
// object lists, into a certificate, and only for a requester whose token is bound to that node.
// Thread safety: pure functions and constants.
#pragma once

#include <string>
#include <string_view>

namespace modelplane::core::api {

inline constexpr std::string_view kPeerSignerName = "modelplane.io/peer";
inline constexpr std::string_view kPeerCommonName = "modelplane-peer";
// The user-info extra a pod-bound ServiceAccount token carries (Kubernetes 1.30+).
inline constexpr std::string_view kTokenNodeNameExtra = "authentication.kubernetes.io/node-name";

// "<node>.peer.modelplane.invalid"
[[nodiscard]] std::string PeerIdentityName(std::string_view node_name);

// The node a PeerIdentityName names; empty when `name` is not one.
[[nodiscard]] std::string NodeOfPeerIdentity(std::string_view name);

// The CertificateSigningRequest object's name for `node`'s key: one per key, so a restart that
// keeps the key finds its request again, and a new key never collides with an old request.
[[nodiscard]] std::string PeerCertificateRequestName(std::string_view node_name,
                                                     std::string_view key_fingerprint);

}  // namespace modelplane::core::api
