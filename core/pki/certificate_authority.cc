#include "core/pki/certificate_authority.h"

#include <algorithm>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include "core/io/bounded_file.h"
#include "core/pki/certificate_info.h"
#include "core/pki/statement_signature.h"

namespace modelplane::core {
namespace {

using pki_internal::OpenSslError;
using std::chrono::system_clock;

constexpr std::size_t kMaxPemBytes = 64 * 1024;

Status AddExtension(X509* certificate, X509* issuer, int nid, const char* value) {
  X509V3_CTX context;
  X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
  if (extension == nullptr) return std::unexpected(OpenSslError(ErrorCode::kInternal, value));
  const bool added = X509_add_ext(certificate, extension, -1) == 1;
  X509_EXTENSION_free(extension);
  if (!added) return std::unexpected(OpenSslError(ErrorCode::kInternal, "X509_add_ext"));
  return Ok();
}

// 127 random bits: unique serials without a counter that would have to survive restarts.
Status SetRandomSerial(X509* certificate) {
  pki_internal::BignumHandle serial(BN_new());
  if (!serial || BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(certificate)) == nullptr) {
    return std::unexpected(OpenSslError(ErrorCode::kInternal, "serial number"));
  }
  return Ok();
}

Status SetValidity(X509* certificate, system_clock::time_point not_before,
                   system_clock::time_point not_after) {
  if (ASN1_TIME_set(X509_getm_notBefore(certificate), system_clock::to_time_t(not_before)) ==
          nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(certificate), system_clock::to_time_t(not_after)) ==
          nullptr) {
    return std::unexpected(OpenSslError(ErrorCode::kInternal, "validity"));
  }
  return Ok();
}

Status SetSubject(X509* certificate, const std::string& common_name) {
  X509_NAME* subject = X509_get_subject_name(certificate);
  if (!common_name.empty() &&
      X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                                 -1, 0) != 1) {
    return std::unexpected(OpenSslError(ErrorCode::kInvalidArgument, "common name"));
  }
  return Ok();
}

std::string CertificatePem(X509* certificate) {
  return pki_internal::WritePem(
      [certificate](BIO* bio) { return PEM_write_bio_X509(bio, certificate); });
}

}  // namespace

CertificateAuthority::CertificateAuthority(pki_internal::CertificateHandle certificate,
                                           pki_internal::KeyHandle key, std::string certificate_pem)
    : certificate_(std::move(certificate)),
      key_(std::move(key)),
      certificate_pem_(std::move(certificate_pem)) {
  auto not_after = pki_internal::ToTimePoint(X509_get0_notAfter(certificate_.get()));
  not_after_ = not_after ? *not_after : system_clock::time_point{};
}

Result<CertificateAuthority> CertificateAuthority::FromPem(std::string_view certificate_pem,
                                                           std::string_view key_pem) {
  auto certificate_bio = pki_internal::ReadBio(certificate_pem, kMaxPemBytes, "CA certificate");
  if (!certificate_bio) return std::unexpected(certificate_bio.error());
  pki_internal::CertificateHandle certificate(
      PEM_read_bio_X509(certificate_bio->get(), nullptr, nullptr, nullptr));
  if (!certificate) {
    return std::unexpected(OpenSslError(ErrorCode::kInvalidArgument, "reading the CA certificate"));
  }
  auto key = PrivateKey::FromPem(key_pem);
  if (!key) return std::unexpected(key.error().Wrap("reading the CA key"));
  if (X509_check_ca(certificate.get()) < 1) {
    return MakeError(ErrorCode::kInvalidArgument, "the CA certificate is not a CA (CA:TRUE)");
  }
  if (X509_check_private_key(certificate.get(), key->native()) != 1) {
    ERR_clear_error();
    return MakeError(ErrorCode::kInvalidArgument, "the CA key does not match its certificate");
  }
  pki_internal::KeyHandle owned(EVP_PKEY_dup(key->native()));
  if (!owned) return std::unexpected(OpenSslError(ErrorCode::kInternal, "EVP_PKEY_dup"));
  std::string pem = CertificatePem(certificate.get());
  return CertificateAuthority(std::move(certificate), std::move(owned), std::move(pem));
}

Result<CertificateAuthority> CertificateAuthority::FromFiles(const std::string& certificate_file,
                                                             const std::string& key_file) {
  auto certificate = ReadBoundedFile(certificate_file, kMaxPemBytes);
  if (!certificate) return std::unexpected(certificate.error().Wrap("reading the CA"));
  auto key = ReadBoundedFile(key_file, kMaxPemBytes);
  if (!key) return std::unexpected(key.error().Wrap("reading the CA key"));
  return FromPem(*certificate, *key);
}

Result<CertificateAuthority> CertificateAuthority::Generate(const std::string& common_name,
                                                            system_clock::time_point not_after) {
  auto key = PrivateKey::Generate();
  if (!key) return std::unexpected(key.error());
  pki_internal::CertificateHandle certificate(X509_new());
  if (!certificate) return std::unexpected(OpenSslError(ErrorCode::kInternal, "X509_new"));
  X509* raw = certificate.get();
  if (X509_set_version(raw, X509_VERSION_3) != 1 || X509_set_pubkey(raw, key->native()) != 1) {
    return std::unexpected(OpenSslError(ErrorCode::kInternal, "CA certificate"));
  }
  for (const Status& status :
       {SetRandomSerial(raw),
        SetValidity(raw, system_clock::now() - std::chrono::hours(1), not_after),
        SetSubject(raw, common_name)}) {
    if (!status) return std::unexpected(status.error());
  }
  X509_set_issuer_name(raw, X509_get_subject_name(raw));
  for (const auto& [nid, value] : {std::pair{NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
                                   std::pair{NID_key_usage, "critical,keyCertSign,cRLSign"},
                                   std::pair{NID_subject_key_identifier, "hash"}}) {
    if (auto status = AddExtension(raw, raw, nid, value); !status) {
      return std::unexpected(status.error());
    }
  }
  if (X509_sign(raw, key->native(), EVP_sha256()) <= 0) {
    return std::unexpected(OpenSslError(ErrorCode::kInternal, "self-signing the CA"));
  }
  pki_internal::KeyHandle owned(EVP_PKEY_dup(key->native()));
  if (!owned) return std::unexpected(OpenSslError(ErrorCode::kInternal, "EVP_PKEY_dup"));
  std::string pem = CertificatePem(raw);
  return CertificateAuthority(std::move(certificate), std::move(owned), std::move(pem));
}

Result<std::string> CertificateAuthority::Issue(const CertificateRequest& request,
                                                const IssueOptions& options) const {
  const system_clock::time_point not_after = std::min(options.not_after, not_after_);
  if (not_after <= options.not_before) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the certificate would not be valid at any time (the CA expires first?)");
  }
  auto alt_names =
      pki_internal::MakeSubjectAltNames(options.names.dns_names, options.names.ip_addresses);
  if (!alt_names) return std::unexpected(alt_names.error());
  pki_internal::CertificateHandle certificate(X509_new());
  if (!certificate) return std::unexpected(OpenSslError(ErrorCode::kInternal, "X509_new"));
  X509* raw = certificate.get();
  if (X509_set_version(raw, X509_VERSION_3) != 1 ||
      X509_set_pubkey(raw, request.public_key()) != 1 ||
      X509_set_issuer_name(raw, X509_get_subject_name(certificate_.get())) != 1) {
    return std::unexpected(OpenSslError(ErrorCode::kInternal, "leaf certificate"));
  }
  for (const Status& status :
       {SetRandomSerial(raw), SetValidity(raw, options.not_before, not_after),
        SetSubject(raw, options.names.common_name)}) {
    if (!status) return std::unexpected(status.error());
  }
  // RSA keys may be used for key transport in TLS 1.2; EC keys only sign.
  const char* key_usage =
      request.rsa() ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature";
  for (const auto& [nid, value] :
       {std::pair{NID_basic_constraints, "critical,CA:FALSE"}, std::pair{NID_key_usage, key_usage},
        std::pair{NID_ext_key_usage, "serverAuth,clientAuth"},
        std::pair{NID_subject_key_identifier, "hash"},
        std::pair{NID_authority_key_identifier, "keyid,issuer"}}) {
    if (auto status = AddExtension(raw, certificate_.get(), nid, value); !status) {
      return std::unexpected(status.error());
    }
  }
  if (!options.names.dns_names.empty() || !options.names.ip_addresses.empty()) {
    if (X509_add1_ext_i2d(raw, NID_subject_alt_name, alt_names->get(), 0, X509V3_ADD_DEFAULT) !=
        1) {
      return std::unexpected(OpenSslError(ErrorCode::kInternal, "subjectAltName"));
    }
  }
  if (X509_sign(raw, key_.get(), EVP_sha256()) <= 0) {
    return std::unexpected(OpenSslError(ErrorCode::kInternal, "signing the certificate"));
  }
  std::string pem = CertificatePem(raw);
  if (pem.empty()) return std::unexpected(OpenSslError(ErrorCode::kInternal, "certificate PEM"));
  return pem;
}

Result<std::string> CertificateAuthority::SignStatement(std::string_view context,
                                                        std::string_view message) const {
  return pki_internal::SignStatement(key_.get(), context, message);
}

std::string CertificateAuthority::private_key_pem() const {
  return pki_internal::WritePem([this](BIO* bio) {
    return PEM_write_bio_PrivateKey(bio, key_.get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
}

}  // namespace modelplane::core
