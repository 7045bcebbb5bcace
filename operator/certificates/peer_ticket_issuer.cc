#include "operator/certificates/peer_ticket_issuer.h"

#include "core/pki/peer_ticket.h"

namespace modelplane::controller {

core::Result<std::unique_ptr<PeerTicketIssuer>> PeerTicketIssuer::Create(
    core::CertificateAuthority authority) {
  auto verifier = core::StatementVerifier::FromCertificatePem(authority.certificate_pem());
  if (!verifier) return std::unexpected(verifier.error());
  return std::unique_ptr<PeerTicketIssuer>(
      new PeerTicketIssuer(std::move(authority), std::move(*verifier)));
}

core::Result<std::unique_ptr<PeerTicketIssuer>> PeerTicketIssuer::Load(
    const std::string& ca_certificate_file, const std::string& ca_key_file) {
  auto authority = core::CertificateAuthority::FromFiles(ca_certificate_file, ca_key_file);
  if (!authority) return std::unexpected(authority.error().Wrap("peer tickets"));
  return Create(std::move(*authority));
}

core::Result<std::string> PeerTicketIssuer::TicketFor(
    const std::string& node, const core::Sha256Bytes& files_root, std::string_view previous,
    std::chrono::system_clock::time_point now) const {
  if (!previous.empty()) {
    auto held = core::ReadPeerTicket(verifier_, previous);
    if (held && held->node == node && held->files_root == files_root &&
        held->expires - now > kPeerTicketLifetime / 2) {
      return std::string(previous);
    }
  }
  return core::SignPeerTicket(
      authority_, {.node = node,
                   .files_root = files_root,
                   .expires = std::chrono::floor<std::chrono::seconds>(now + kPeerTicketLifetime)});
}

}  // namespace modelplane::controller
