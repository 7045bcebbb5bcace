// The operator's peer tickets (core/pki/peer_ticket.h): for each node it asks to stage a
// revision from peers, a ticket naming the node and the revision's files, signed with the peer
// CA's key the operator holds to sign agents' certificates. Peers that check scope serve a
// node only the blobs its ticket covers (node-agent/peer/peer_scope.h).
//
// A ticket lives kPeerTicketLifetime; the one a node's entry carries is kept while it names the
// same node and files and has more than half its life left, so the entry (and the API server)
// sees a new one about every half hour, not on every pass. Passes come at least once per
// resync period (minutes), well inside that half.
// Thread safety: immutable after Create; TicketFor may be called from several threads at once.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "core/digest/sha256.h"
#include "core/error/error.h"
#include "core/pki/certificate_authority.h"
#include "core/pki/statement_signature.h"

namespace modelplane::controller {

inline constexpr std::chrono::seconds kPeerTicketLifetime = std::chrono::hours(1);

class PeerTicketIssuer {
 public:
  [[nodiscard]] static core::Result<std::unique_ptr<PeerTicketIssuer>> Create(
      core::CertificateAuthority authority);
  // The peer CA's certificate and key files (the operator's peerCertificates configuration).
  [[nodiscard]] static core::Result<std::unique_ptr<PeerTicketIssuer>> Load(
      const std::string& ca_certificate_file, const std::string& ca_key_file);

  // `previous` when it is this issuer's ticket for `node` and `files_root` with more than half
  // its lifetime left at `now`; a new ticket otherwise.
  [[nodiscard]] core::Result<std::string> TicketFor(
      const std::string& node, const core::Sha256Bytes& files_root, std::string_view previous,
      std::chrono::system_clock::time_point now) const;

 private:
  PeerTicketIssuer(core::CertificateAuthority authority, core::StatementVerifier verifier)
      : authority_(std::move(authority)), verifier_(std::move(verifier)) {}
  const core::CertificateAuthority authority_;
  const core::StatementVerifier verifier_;  // its own certificate: reads `previous`
};

}  // namespace modelplane::controller
