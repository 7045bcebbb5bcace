// PeerScope: whether a peer may serve one blob to the node that asks (docs/peer.md, "Peer
// scope"). A node reads from peers only what the operator's plan asks it to stage: its request
// carries the ticket the operator wrote into its ModelCache entry (core/pki/peer_ticket.h) and a
// proof that the blob is one of that revision's files (core/digest/file_set_tree.h); the ticket
// must verify with the peer CA, name the node whose certificate made the request, and not have
// expired. Anything else is refused with one of the fixed reasons below, which the server sends
// with a 403 (the client then reads the blob from another source).
//
// A ticket that verified once is remembered until it expires (a small bounded cache), so a
// staging's many range requests cost one signature check per ticket, not one each.
// Thread safety: Check may be called from several threads at once.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/digest/sha256.h"
#include "core/error/error.h"
#include "core/pki/peer_ticket.h"
#include "core/pki/statement_signature.h"

namespace modelplane::agent {

// The reasons a refusal starts with ("<Reason>: <detail>").
inline constexpr std::string_view kPeerScopeNoNodeIdentity = "PeerNodeIdentityRequired";
inline constexpr std::string_view kPeerScopeTicketMissing = "PeerTicketMissing";
inline constexpr std::string_view kPeerScopeTicketInvalid = "PeerTicketInvalid";
inline constexpr std::string_view kPeerScopeTicketExpired = "PeerTicketExpired";
inline constexpr std::string_view kPeerScopeTicketForAnotherNode = "PeerTicketForAnotherNode";
inline constexpr std::string_view kPeerScopeBlobNotInTicket = "BlobNotInPeerTicket";
inline constexpr std::array<std::string_view, 6> kPeerScopeReasons = {
    kPeerScopeNoNodeIdentity,       kPeerScopeTicketMissing, kPeerScopeTicketInvalid,
    kPeerScopeTicketForAnotherNode, kPeerScopeTicketExpired, kPeerScopeBlobNotInTicket};

struct PeerScopeRequest {
  std::string_view node;    // the node the client certificate names; empty: none
  std::string_view ticket;  // the kPeerTicketHeader value; empty: absent
  std::string_view proof;   // the kPeerProofHeader value; empty: absent
  core::Sha256Bytes blob;
};

class PeerScope {
 public:
  // `verifier` holds the peer CA's certificate(s); not null.
  explicit PeerScope(std::shared_ptr<const core::StatementVerifier> verifier,
                     std::chrono::seconds clock_skew = std::chrono::seconds(30))
      : verifier_(std::move(verifier)), clock_skew_(clock_skew) {}

  // Ok, or kPermissionDenied whose message starts with the reason.
  [[nodiscard]] core::Status Check(const PeerScopeRequest& request,
                                   std::chrono::system_clock::time_point now) const;

 private:
  [[nodiscard]] core::Result<core::PeerTicket> Read(std::string_view text) const;

  const std::shared_ptr<const core::StatementVerifier> verifier_;
  const std::chrono::seconds clock_skew_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, core::PeerTicket> verified_;
};

}  // namespace modelplane::agent
