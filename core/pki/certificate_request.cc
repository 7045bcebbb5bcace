#include "core/pki/certificate_request.h"

#include <array>

#include <fmt/format.h>
#include <openssl/ec.h>
#include <openssl/pem.h>

namespace modelplane::core {
namespace {

using pki_internal::OpenSslError;

constexpr std::size_t kMaxRequestPemBytes = 16 * 1024;
constexpr std::size_t kMaxNames = 32;
constexpr std::size_t kMaxNameBytes = 253;  // a DNS name's own limit

Status AddCommonName(X509_NAME* subject, const std::string& common_name) {
  if (common_name.empty()) return Ok();
  // RFC 5280's upper bound for a common name; longer ones are refused by many verifiers.
  if (common_name.size() > 64) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("common name '{}' is longer than 64 bytes", common_name));
  }
  if (X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                                 -1, 0) != 1) {
    return std::unexpected(OpenSslError(ErrorCode::kInvalidArgument, "common name"));
  }
  return Ok();
}

std::string CommonNameOf(const X509_NAME* subject) {
  const int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (index < 0) return {};
  const ASN1_STRING* value = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
  unsigned char* utf8 = nullptr;
  const int length = ASN1_STRING_to_UTF8(&utf8, value);
  std::string name;
  if (length > 0) name.assign(reinterpret_cast<char*>(utf8), static_cast<std::size_t>(length));
  OPENSSL_free(utf8);
  return name;
}

Status CheckKeyStrength(EVP_PKEY* key) {
  if (EVP_PKEY_is_a(key, "EC")) {
    std::array<char, 64> group{};
    std::size_t length = 0;
    if (EVP_PKEY_get_group_name(key, group.data(), group.size(), &length) == 1) {
      const std::string_view name(group.data(), length);
      if (name == "prime256v1" || name == "secp384r1") return Ok();
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("an EC key on curve {} (P-256 or P-384 only)", name));
    }
  } else if (EVP_PKEY_is_a(key, "RSA")) {
    if (EVP_PKEY_get_bits(key) >= 2048) return Ok();
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("an RSA key of {} bits (2048 or more only)", EVP_PKEY_get_bits(key)));
  }
  return MakeError(ErrorCode::kInvalidArgument, "a key that is neither EC nor RSA");
}

Status CheckNames(const CertificateNames& names) {
  if (names.dns_names.size() + names.ip_addresses.size() > kMaxNames) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("more than {} subject alternative names", kMaxNames));
  }
  for (const std::string& dns : names.dns_names) {
    if (dns.empty() || dns.size() > kMaxNameBytes) {
      return MakeError(ErrorCode::kInvalidArgument, "a DNS name that is empty or too long");
    }
  }
  return Ok();
}

}  // namespace

Result<std::string> MakeCertificateRequestPem(const PrivateKey& key,
                                              const CertificateNames& names) {
  if (auto status = CheckNames(names); !status) return std::unexpected(status.error());
  pki_internal::RequestHandle request(X509_REQ_new());
  if (!request) return std::unexpected(OpenSslError(ErrorCode::kInternal, "X509_REQ_new"));
  if (X509_REQ_set_version(request.get(), X509_REQ_VERSION_1) != 1 ||
      X509_REQ_set_pubkey(request.get(), key.native()) != 1) {
    return std::unexpected(OpenSslError(ErrorCode::kInternal, "certificate request key"));
  }
  if (auto status = AddCommonName(X509_REQ_get_subject_name(request.get()), names.common_name);
      !status) {
    return std::unexpected(status.error());
  }
  auto alt_names = pki_internal::MakeSubjectAltNames(names.dns_names, names.ip_addresses);
  if (!alt_names) return std::unexpected(alt_names.error());
  STACK_OF(X509_EXTENSION)* extensions = sk_X509_EXTENSION_new_null();
  const bool added = extensions != nullptr &&
                     X509V3_add1_i2d(&extensions, NID_subject_alt_name, alt_names->get(), 0,
                                     X509V3_ADD_DEFAULT) == 1 &&
                     X509_REQ_add_extensions(request.get(), extensions) == 1;
  sk_X509_EXTENSION_pop_free(extensions, X509_EXTENSION_free);
  if (!added) return std::unexpected(OpenSslError(ErrorCode::kInternal, "request extensions"));
  if (X509_REQ_sign(request.get(), key.native(), EVP_sha256()) <= 0) {
    return std::unexpected(OpenSslError(ErrorCode::kInternal, "signing the request"));
  }
  std::string pem = pki_internal::WritePem(
      [&request](BIO* bio) { return PEM_write_bio_X509_REQ(bio, request.get()); });
  if (pem.empty()) return std::unexpected(OpenSslError(ErrorCode::kInternal, "request PEM"));
  return pem;
}

Result<CertificateRequest> CertificateRequest::Parse(std::string_view pem) {
  auto bio = pki_internal::ReadBio(pem, kMaxRequestPemBytes, "certificate request");
  if (!bio) return std::unexpected(bio.error());
  pki_internal::RequestHandle request(PEM_read_bio_X509_REQ(bio->get(), nullptr, nullptr, nullptr));
  if (!request) {
    return std::unexpected(
        OpenSslError(ErrorCode::kInvalidArgument, "not a PEM certificate request"));
  }
  EVP_PKEY* key = X509_REQ_get0_pubkey(request.get());
  if (key == nullptr) return MakeError(ErrorCode::kInvalidArgument, "the request has no key");
  if (X509_REQ_verify(request.get(), key) != 1) {
    return std::unexpected(OpenSslError(ErrorCode::kInvalidArgument,
                                        "the request's signature does not verify with its key"));
  }
  if (auto status = CheckKeyStrength(key); !status) {
    return std::unexpected(status.error().Wrap("the request has"));
  }
  CertificateNames names;
  names.common_name = CommonNameOf(X509_REQ_get_subject_name(request.get()));
  STACK_OF(X509_EXTENSION)* extensions = X509_REQ_get_extensions(request.get());
  if (extensions != nullptr) {
    pki_internal::NamesHandle alt_names(static_cast<GENERAL_NAMES*>(
        X509V3_get_d2i(extensions, NID_subject_alt_name, nullptr, nullptr)));
    sk_X509_EXTENSION_pop_free(extensions, X509_EXTENSION_free);
    auto read = pki_internal::ReadSubjectAltNames(alt_names.get());
    if (!read) return std::unexpected(read.error());
    names.dns_names = std::move(read->dns_names);
    names.ip_addresses = std::move(read->ip_addresses);
  }
  if (auto status = CheckNames(names); !status) return std::unexpected(status.error());
  auto fingerprint = pki_internal::PublicKeyFingerprint(key);
  if (!fingerprint) return std::unexpected(fingerprint.error());
  return CertificateRequest(std::move(request), std::move(names), std::move(*fingerprint));
}

EVP_PKEY* CertificateRequest::public_key() const {
  return X509_REQ_get0_pubkey(request_.get());
}

bool CertificateRequest::rsa() const {
  return EVP_PKEY_is_a(public_key(), "RSA") == 1;
}

}  // namespace modelplane::core
