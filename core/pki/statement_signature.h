// Signed statements: short messages that the holder of a CA's key (the operator, for the peer
// CA) makes to everyone who trusts the CA's certificate (the node agents), so that one key the
// cluster already distributes carries decisions too, not only identities (peer tickets,
// core/pki/peer_ticket.h).
//
// A signature covers "modelplane-statement\0<context>\0<message>" with SHA-256 (ECDSA or RSA,
// as the CA's key is). The context names the kind of statement, so a signature made for one
// kind never verifies as another, and the fixed prefix keeps it from meaning anything outside
// modelplane (a certificate's signed part is DER and starts with 0x30).
//
// Thread safety: a StatementVerifier is immutable once made; Verify may be called from several
// threads at once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"
#include "core/pki/openssl_handles.h"

namespace modelplane::core {

class StatementVerifier {
 public:
  // Every certificate of a PEM bundle (a CA being rotated has two): a statement signed by the
  // key of any of them verifies. kInvalidArgument when the text holds none.
  [[nodiscard]] static Result<StatementVerifier> FromCertificatePem(std::string_view pem);
  [[nodiscard]] static Result<StatementVerifier> FromCertificateFile(const std::string& path);

  [[nodiscard]] bool Verify(std::string_view context, std::string_view message,
                            std::string_view signature) const;

 private:
  explicit StatementVerifier(std::vector<pki_internal::KeyHandle> keys) : keys_(std::move(keys)) {}
  std::vector<pki_internal::KeyHandle> keys_;
};

namespace pki_internal {
// The signature CertificateAuthority::SignStatement returns.
[[nodiscard]] Result<std::string> SignStatement(EVP_PKEY* key, std::string_view context,
                                                std::string_view message);
}  // namespace pki_internal

}  // namespace modelplane::core
