#include "node-agent/peer/peer_scope.h"

#include <fmt/format.h>

#include "core/digest/file_set_tree.h"

namespace modelplane::agent {
namespace {

// Tickets remembered at most: a node serves a few readers at a time, each with a ticket per
// revision; past this the cache starts over rather than grow.
constexpr std::size_t kMaxRememberedTickets = 1024;

core::Error Refusal(std::string_view reason, std::string_view detail) {
  return core::Error(core::ErrorCode::kPermissionDenied, fmt::format("{}: {}", reason, detail),
                     false);
}

}  // namespace

core::Result<core::PeerTicket> PeerScope::Read(std::string_view text) const {
  {
    const std::lock_guard lock(mutex_);
    if (auto known = verified_.find(std::string(text)); known != verified_.end()) {
      return known->second;
    }
  }
  auto ticket = core::ReadPeerTicket(*verifier_, text);
  if (!ticket) return ticket;
  const std::lock_guard lock(mutex_);
  if (verified_.size() >= kMaxRememberedTickets) verified_.clear();
  verified_.emplace(std::string(text), *ticket);
  return ticket;
}

core::Status PeerScope::Check(const PeerScopeRequest& request,
                              std::chrono::system_clock::time_point now) const {
  if (request.node.empty()) {
    return std::unexpected(
        Refusal(kPeerScopeNoNodeIdentity, "only a node's own peer certificate can show a ticket"));
  }
  if (request.ticket.empty()) {
    return std::unexpected(Refusal(
        kPeerScopeTicketMissing,
        fmt::format("node {} showed no ticket: it reads from peers only what it is asked to stage",
                    request.node)));
  }
  auto ticket = Read(request.ticket);
  if (!ticket) return std::unexpected(Refusal(kPeerScopeTicketInvalid, ticket.error().message()));
  if (ticket->node != request.node) {
    return std::unexpected(Refusal(
        kPeerScopeTicketForAnotherNode,
        fmt::format("the ticket names node {}, the certificate {}", ticket->node, request.node)));
  }
  if (now > ticket->expires + clock_skew_) {
    return std::unexpected(Refusal(
        kPeerScopeTicketExpired,
        fmt::format(
            "the ticket expired {} s ago",
            std::chrono::duration_cast<std::chrono::seconds>(now - ticket->expires).count())));
  }
  if (request.proof.empty()) {
    return std::unexpected(Refusal(kPeerScopeBlobNotInTicket, "no proof that the blob is covered"));
  }
  auto proof = core::ParseFileSetProof(request.proof);
  if (!proof) return std::unexpected(Refusal(kPeerScopeBlobNotInTicket, proof.error().message()));
  if (!core::VerifyFileSetProof(ticket->files_root, request.blob, *proof)) {
    return std::unexpected(Refusal(kPeerScopeBlobNotInTicket,
                                   fmt::format("{} is not a file of the revision the ticket covers",
                                               core::FormatDigest(request.blob))));
  }
  return core::Ok();
}

}  // namespace modelplane::agent
