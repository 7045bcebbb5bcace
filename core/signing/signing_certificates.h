// Certificate mode of model-signing, as core/signing checks it: a signer's certificate
// authorities (PEM, read when the config is), and a bundle's signing certificate with its chain
// (DER, leaf first) verified against them alone at a given time, with the leaf's permission to
// sign and its subjectAltNames. Internal to core/signing.
//
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"
#include "core/pki/openssl_handles.h"

namespace modelplane::core::signing_internal {

// Every certificate of a PEM bundle; kInvalidArgument when it holds none or is not PEM.
[[nodiscard]] Result<std::vector<pki_internal::CertificateHandle>> ReadCertificateAuthorities(
    std::string_view pem);

// A DER certificate that must fill `der` exactly.
[[nodiscard]] Result<pki_internal::CertificateHandle> ReadDerCertificate(std::string_view der);

enum class ChainOutcome {
  kTrusted,    // leads to one of the authorities, every certificate valid at the time
  kExpired,    // leads to one, but a certificate of the chain is not valid at the time
  kUntrusted,  // leads to none of them, or breaks a rule on the way (not a CA, bad signature)
};

struct ChainVerdict {
  ChainOutcome outcome = ChainOutcome::kUntrusted;
  std::string detail;  // OpenSSL's reason, for the message
};

// Verifies `leaf` with `intermediates` as untrusted helpers against `authorities` only (never
// the system's roots) at `at`.
[[nodiscard]] ChainVerdict VerifyCertificateChain(
    X509* leaf, const std::vector<pki_internal::CertificateHandle>& intermediates,
    const std::vector<pki_internal::CertificateHandle>& authorities,
    std::chrono::system_clock::time_point at);

// As model-signing decides: keyUsage with digitalSignature, or else extendedKeyUsage with
// codeSigning.
[[nodiscard]] bool MaySign(X509* leaf);

// The leaf's subjectAltNames that name a signer (email, URI, DNS), in certificate order.
[[nodiscard]] std::vector<std::string> SignerIdentities(X509* leaf);

}  // namespace modelplane::core::signing_internal
