// Peer tickets: the operator's signed word that one node may read the files of one revision
// from its peers, until a time. A peer serves a blob only to a node that shows a ticket naming
// it (the node its client certificate names) and a proof that the blob is one of the ticket's
// files (core/digest/file_set_tree.h); so a node reads from peers only what the operator's plan
// asks it to stage, however it learnt of other digests.
//
// The operator writes each staging node's ticket into that node's ModelCache entry (beside the
// peers it chose) and signs it with the peer CA's key, which it holds already to sign the
// agents' certificates; agents check it with the CA certificate they already trust
// (statement_signature.h). Text form, one header on every peer request:
//   v1.<base64 of "<node>\n<files root, 64 hex>\n<expiry, Unix seconds>">.<base64 signature>
//
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "core/digest/sha256.h"
#include "core/error/error.h"
#include "core/pki/certificate_authority.h"
#include "core/pki/statement_signature.h"

namespace modelplane::core {

struct PeerTicket {
  std::string node;        // a Node's name: a DNS subdomain
  Sha256Bytes files_root;  // FileSetTree::Of(the revision's file digests).root()
  std::chrono::system_clock::time_point expires;  // whole seconds

  friend bool operator==(const PeerTicket&, const PeerTicket&) = default;
};

inline constexpr std::string_view kPeerTicketHeader = "Modelplane-Peer-Ticket";
inline constexpr std::string_view kPeerProofHeader = "Modelplane-Peer-Proof";
inline constexpr std::size_t kMaxPeerTicketBytes = 2048;

// kInvalidArgument for a node name that is not a DNS subdomain.
[[nodiscard]] Result<std::string> SignPeerTicket(const CertificateAuthority& authority,
                                                 const PeerTicket& ticket);

// What `text` states, once its signature verifies with `verifier`: kUnauthenticated with the
// reason for anything else (malformed, another version, a signature that does not verify).
// Whether it has expired is the caller's check.
[[nodiscard]] Result<PeerTicket> ReadPeerTicket(const StatementVerifier& verifier,
                                                std::string_view text);

}  // namespace modelplane::core
