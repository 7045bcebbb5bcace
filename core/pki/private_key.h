// A private key that never leaves the process that made it: node agents generate one for their
// peer identity and send only a certificate request (certificate_request.h) to be signed.
//
// Thread safety: a PrivateKey is used by one thread at a time; copies are not possible.
#pragma once

#include <string>
#include <string_view>

#include "core/error/error.h"
#include "core/pki/openssl_handles.h"

namespace modelplane::core {

class PrivateKey {
 public:
  // A new ECDSA P-256 key: small, fast to sign with, accepted by every TLS 1.2/1.3 peer.
  [[nodiscard]] static Result<PrivateKey> Generate();
  // An unencrypted PEM key (PKCS#8 or traditional), at most 64 KiB.
  [[nodiscard]] static Result<PrivateKey> FromPem(std::string_view pem);

  // PKCS#8 PEM, unencrypted: write it only to a file that only this process may read.
  [[nodiscard]] std::string ToPem() const;
  // "sha256:<hex>" of the public key: names the key without revealing it.
  [[nodiscard]] const std::string& fingerprint() const { return fingerprint_; }
  [[nodiscard]] EVP_PKEY* native() const { return key_.get(); }

 private:
  PrivateKey(pki_internal::KeyHandle key, std::string fingerprint)
      : key_(std::move(key)), fingerprint_(std::move(fingerprint)) {}
  pki_internal::KeyHandle key_;
  std::string fingerprint_;
};

}  // namespace modelplane::core
