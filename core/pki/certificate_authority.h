// A certificate authority that signs leaf certificates for TLS server and client use: the
// operator's peer-certificate signer holds the cluster's peer CA as one of these.
//
// The issued certificate carries what the caller decided, not what the request asked for: the
// request contributes only its (verified) public key, so a requester cannot smuggle in names,
// key usages or a CA bit.
// Thread safety: Issue may be called from several threads at once (the key is only read).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "core/error/error.h"
#include "core/pki/certificate_request.h"
#include "core/pki/openssl_handles.h"

namespace modelplane::core {

struct IssueOptions {
  CertificateNames names;
  std::chrono::system_clock::time_point not_before;
  std::chrono::system_clock::time_point not_after;  // clipped to the CA's own
};

class CertificateAuthority {
 public:
  // The CA's certificate and its unencrypted private key, both PEM; the certificate must be a
  // CA (basicConstraints CA:TRUE) and the key must match it.
  [[nodiscard]] static Result<CertificateAuthority> FromPem(std::string_view certificate_pem,
                                                            std::string_view key_pem);
  // The same from the two PEM files (a mounted Secret's tls.crt and tls.key), each read with a
  // bound; errors name what could not be read.
  [[nodiscard]] static Result<CertificateAuthority> FromFiles(const std::string& certificate_file,
                                                              const std::string& key_file);
  // A new self-signed CA (tests, and the local demo's throwaway PKI).
  [[nodiscard]] static Result<CertificateAuthority> Generate(
      const std::string& common_name, std::chrono::system_clock::time_point not_after);

  // A PEM certificate for `request`'s key with `options`' names and validity.
  [[nodiscard]] Result<std::string> Issue(const CertificateRequest& request,
                                          const IssueOptions& options) const;

  // A statement signed with the CA's key (statement_signature.h), which those who trust the
  // CA's certificate check with StatementVerifier.
  [[nodiscard]] Result<std::string> SignStatement(std::string_view context,
                                                  std::string_view message) const;

  [[nodiscard]] const std::string& certificate_pem() const { return certificate_pem_; }
  [[nodiscard]] std::string private_key_pem() const;
  [[nodiscard]] std::chrono::system_clock::time_point not_after() const { return not_after_; }

 private:
  CertificateAuthority(pki_internal::CertificateHandle certificate, pki_internal::KeyHandle key,
                       std::string certificate_pem);
  pki_internal::CertificateHandle certificate_;
  pki_internal::KeyHandle key_;
  std::string certificate_pem_;
  std::chrono::system_clock::time_point not_after_;
};

}  // namespace modelplane::core
