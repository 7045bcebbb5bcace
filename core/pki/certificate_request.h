// PKCS#10 certificate requests: made by whoever holds the private key (a node agent asking for
// its peer certificate), parsed and checked by whoever signs (the operator's signer).
//
// Parsing verifies the request's own signature (the requester holds the key) and accepts only
// DNS and IP subject alternative names, bounded in number and size: a signer must understand
// every name it is asked to sign.
// Thread safety: values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"
#include "core/pki/openssl_handles.h"
#include "core/pki/private_key.h"

namespace modelplane::core {

struct CertificateNames {
  std::string common_name;
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;  // textual, IPv4 or IPv6
};

// A PEM "CERTIFICATE REQUEST" for `key` with `names`, signed with SHA-256.
[[nodiscard]] Result<std::string> MakeCertificateRequestPem(const PrivateKey& key,
                                                            const CertificateNames& names);

class CertificateRequest {
 public:
  // At most 16 KiB of PEM and 32 names; the key must be ECDSA P-256/P-384 or RSA of 2048 bits or
  // more, and the request's signature must verify with it.
  [[nodiscard]] static Result<CertificateRequest> Parse(std::string_view pem);

  [[nodiscard]] const CertificateNames& names() const { return names_; }
  [[nodiscard]] const std::string& public_key_fingerprint() const { return fingerprint_; }
  // The requested public key (owned by the request).
  [[nodiscard]] EVP_PKEY* public_key() const;
  [[nodiscard]] bool rsa() const;

 private:
  CertificateRequest(pki_internal::RequestHandle request, CertificateNames names,
                     std::string fingerprint)
      : request_(std::move(request)),
        names_(std::move(names)),
        fingerprint_(std::move(fingerprint)) {}
  pki_internal::RequestHandle request_;
  CertificateNames names_;
  std::string fingerprint_;
};

}  // namespace modelplane::core
