// Move-only owners of the OpenSSL objects core/pki works with, and PEM text in and out of them.
// Internal to core/pki: callers see PrivateKey, CertificateRequest and the rest.
//
// Thread safety: values; one owner per object.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "core/error/error.h"

namespace modelplane::core::pki_internal {

struct OpenSslDeleter {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
  void operator()(X509* certificate) const { X509_free(certificate); }
  void operator()(X509_REQ* request) const { X509_REQ_free(request); }
  void operator()(GENERAL_NAMES* names) const { GENERAL_NAMES_free(names); }
  void operator()(BIO* bio) const { BIO_free(bio); }
  void operator()(BIGNUM* number) const { BN_free(number); }
};
using KeyHandle = std::unique_ptr<EVP_PKEY, OpenSslDeleter>;
using CertificateHandle = std::unique_ptr<X509, OpenSslDeleter>;
using RequestHandle = std::unique_ptr<X509_REQ, OpenSslDeleter>;
using NamesHandle = std::unique_ptr<GENERAL_NAMES, OpenSslDeleter>;
using BioHandle = std::unique_ptr<BIO, OpenSslDeleter>;
using BignumHandle = std::unique_ptr<BIGNUM, OpenSslDeleter>;

// An error that names what failed and OpenSSL's first queued reason (the queue is cleared).
[[nodiscard]] Error OpenSslError(ErrorCode code, std::string_view what);

// A read-only memory BIO over `pem`; PEM inputs above `max_bytes` are refused before parsing.
[[nodiscard]] Result<BioHandle> ReadBio(std::string_view pem, std::size_t max_bytes,
                                        std::string_view what);

// Runs `write(bio)` on a memory BIO and returns what it wrote; empty when it failed.
template <class Write>
[[nodiscard]] std::string WritePem(Write write) {
  BioHandle bio(BIO_new(BIO_s_mem()));
  if (!bio || write(bio.get()) != 1) return {};
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &data);
  return length > 0 ? std::string(data, static_cast<std::size_t>(length)) : std::string();
}

// "sha256:<hex>" of the DER SubjectPublicKeyInfo: which key a request or certificate is for.
[[nodiscard]] Result<std::string> PublicKeyFingerprint(EVP_PKEY* key);

// A GENERAL_NAMES list of DNS names and IP addresses (textual, v4 or v6); refuses a malformed IP.
[[nodiscard]] Result<NamesHandle> MakeSubjectAltNames(const std::vector<std::string>& dns_names,
                                                      const std::vector<std::string>& ip_addresses);

// The DNS names and IP addresses of a subjectAltName list; any other kind of name is refused
// (an issuer that cannot check a name must not sign it).
struct SubjectAltNames {
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;
};
[[nodiscard]] Result<SubjectAltNames> ReadSubjectAltNames(const GENERAL_NAMES* names);

}  // namespace modelplane::core::pki_internal
