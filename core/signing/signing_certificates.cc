#include "core/signing/signing_certificates.h"

#include <cstdint>
#include <ctime>
#include <memory>

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include "core/api/timestamp.h"
#include "core/pki/certificate_info.h"
#include "core/signing/signing_keys.h"
#include "core/signing/sigstore_bundle.h"

namespace modelplane::core::signing_internal {
namespace {

struct ChainDeleter {
  void operator()(X509_STORE* store) const { X509_STORE_free(store); }
  void operator()(X509_STORE_CTX* context) const { X509_STORE_CTX_free(context); }
  // The stack borrows its certificates; their handles own them.
  void operator()(STACK_OF(X509) * stack) const { sk_X509_free(stack); }
};
using StoreHandle = std::unique_ptr<X509_STORE, ChainDeleter>;
using StoreContextHandle = std::unique_ptr<X509_STORE_CTX, ChainDeleter>;
using CertificateStackHandle = std::unique_ptr<STACK_OF(X509), ChainDeleter>;

ChainVerdict Untrusted(std::string detail) {
  ERR_clear_error();
  return {.outcome = ChainOutcome::kUntrusted, .detail = std::move(detail)};
}

// ", valid from <notBefore> to <notAfter>" of the certificate, or "" when they cannot be read.
std::string Validity(const X509* certificate) {
  if (certificate == nullptr) return {};
  auto not_before = pki_internal::ToTimePoint(X509_get0_notBefore(certificate));
  auto not_after = pki_internal::ToTimePoint(X509_get0_notAfter(certificate));
  if (!not_before || !not_after) return {};
  const auto format = [](std::chrono::system_clock::time_point time) {
    return api::FormatTimestamp(std::chrono::floor<std::chrono::microseconds>(time));
  };
  return fmt::format(", valid from {} to {}", format(*not_before), format(*not_after));
}

}  // namespace

Result<std::vector<pki_internal::CertificateHandle>> ReadCertificateAuthorities(
    std::string_view pem) {
  auto bio = pki_internal::ReadBio(pem, kMaxPolicyPemBytes, "certificate authorities PEM");
  if (!bio) return std::unexpected(bio.error());
  std::vector<pki_internal::CertificateHandle> certificates;
  while (true) {
    pki_internal::CertificateHandle certificate(
        PEM_read_bio_X509(bio->get(), nullptr, nullptr, nullptr));
    if (!certificate) break;
    certificates.push_back(std::move(certificate));
  }
  ERR_clear_error();  // the read past the last certificate
  if (certificates.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
  }
  return certificates;
}

Result<pki_internal::CertificateHandle> ReadDerCertificate(std::string_view der) {
  const auto* cursor = reinterpret_cast<const unsigned char*>(der.data());
  pki_internal::CertificateHandle certificate(
      d2i_X509(nullptr, &cursor, static_cast<long>(der.size())));
  if (!certificate) {
    return std::unexpected(
        pki_internal::OpenSslError(ErrorCode::kInvalidArgument, "not a DER certificate"));
  }
  if (cursor != reinterpret_cast<const unsigned char*>(der.data() + der.size())) {
    return MakeError(ErrorCode::kInvalidArgument, "a DER certificate followed by other bytes");
  }
  return certificate;
}

ChainVerdict VerifyCertificateChain(
    X509* leaf, const std::vector<pki_internal::CertificateHandle>& intermediates,
    const std::vector<pki_internal::CertificateHandle>& authorities,
    std::chrono::system_clock::time_point at) {
  // A store of this signer's authorities alone: no system roots, no default paths.
  StoreHandle store(X509_STORE_new());
  CertificateStackHandle untrusted(sk_X509_new_null());
  StoreContextHandle context(X509_STORE_CTX_new());
  if (!store || !untrusted || !context) return Untrusted("out of memory");
  for (const pki_internal::CertificateHandle& authority : authorities) {
    if (X509_STORE_add_cert(store.get(), authority.get()) != 1) {
      return Untrusted("a certificate authority could not be added");
    }
  }
  for (const pki_internal::CertificateHandle& intermediate : intermediates) {
    if (sk_X509_push(untrusted.get(), intermediate.get()) <= 0) return Untrusted("out of memory");
  }
  if (X509_STORE_CTX_init(context.get(), store.get(), leaf, untrusted.get()) != 1) {
    return Untrusted("X509_STORE_CTX_init failed");
  }
  X509_VERIFY_PARAM* parameters = X509_STORE_CTX_get0_param(context.get());
  X509_VERIFY_PARAM_set_time(parameters, std::chrono::system_clock::to_time_t(at));
  // The bundle carries at most kMaxBundleCertificates; a longer path (a loop of cross-signed
  // certificates) stops here rather than at OpenSSL's default of 100.
  X509_VERIFY_PARAM_set_depth(parameters, static_cast<int>(kMaxBundleCertificates));

  const bool verified = X509_verify_cert(context.get()) == 1;
  const int error = X509_STORE_CTX_get_error(context.get());
  const int depth = X509_STORE_CTX_get_error_depth(context.get());
  ERR_clear_error();
  if (verified) return {.outcome = ChainOutcome::kTrusted, .detail = {}};
  std::string detail = fmt::format(
      "{} ({})", X509_verify_cert_error_string(error),
      depth == 0 ? std::string("the signing certificate")
                 : fmt::format("certificate {} of the chain, counted from the signing one", depth));
  if (error == X509_V_ERR_CERT_HAS_EXPIRED || error == X509_V_ERR_CERT_NOT_YET_VALID) {
    detail += Validity(X509_STORE_CTX_get_current_cert(context.get()));
    return {.outcome = ChainOutcome::kExpired, .detail = std::move(detail)};
  }
  return Untrusted(std::move(detail));
}

bool MaySign(X509* leaf) {
  const std::uint32_t flags = X509_get_extension_flags(leaf);
  if ((flags & EXFLAG_KUSAGE) != 0 && (X509_get_key_usage(leaf) & KU_DIGITAL_SIGNATURE) != 0) {
    return true;
  }
  return (flags & EXFLAG_XKUSAGE) != 0 && (X509_get_extended_key_usage(leaf) & XKU_CODE_SIGN) != 0;
}

std::vector<std::string> SignerIdentities(X509* leaf) {
  std::vector<std::string> identities;
  const pki_internal::NamesHandle names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(leaf, NID_subject_alt_name, nullptr, nullptr)));
  ERR_clear_error();
  if (!names) return identities;
  for (int index = 0; index < sk_GENERAL_NAME_num(names.get()); ++index) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), index);
    int type = 0;
    const auto* text = static_cast<const ASN1_STRING*>(GENERAL_NAME_get0_value(name, &type));
    if (type != GEN_EMAIL && type != GEN_URI && type != GEN_DNS) continue;
    std::string identity(reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
                         static_cast<std::size_t>(ASN1_STRING_length(text)));
    // No administrator configures a name with a NUL byte; one would only garble messages.
    if (identity.find('\0') == std::string::npos) identities.push_back(std::move(identity));
  }
  return identities;
}

}  // namespace modelplane::core::signing_internal
