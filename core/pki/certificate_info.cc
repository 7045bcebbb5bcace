#include "core/pki/certificate_info.h"

#include <ctime>

#include <openssl/pem.h>

namespace modelplane::core {

namespace pki_internal {
Result<std::chrono::system_clock::time_point> ToTimePoint(const ASN1_TIME* time) {
  std::tm parts{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &parts) != 1) {
    return MakeError(ErrorCode::kInvalidArgument, "a certificate time that cannot be read");
  }
  return std::chrono::system_clock::from_time_t(timegm(&parts));
}
}  // namespace pki_internal

Result<CertificateInfo> ReadCertificateInfo(std::string_view pem) {
  auto bio = pki_internal::ReadBio(pem, 64 * 1024, "certificate PEM");
  if (!bio) return std::unexpected(bio.error());
  pki_internal::CertificateHandle certificate(
      PEM_read_bio_X509(bio->get(), nullptr, nullptr, nullptr));
  if (!certificate) {
    return std::unexpected(
        pki_internal::OpenSslError(ErrorCode::kInvalidArgument, "not a PEM certificate"));
  }
  CertificateInfo info;
  auto not_before = pki_internal::ToTimePoint(X509_get0_notBefore(certificate.get()));
  auto not_after = pki_internal::ToTimePoint(X509_get0_notAfter(certificate.get()));
  if (!not_before) return std::unexpected(not_before.error());
  if (!not_after) return std::unexpected(not_after.error());
  info.not_before = *not_before;
  info.not_after = *not_after;
  const X509_NAME* subject = X509_get_subject_name(certificate.get());
  if (const int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1); index >= 0) {
    const ASN1_STRING* value = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
    info.names.common_name.assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(value)),
                                  static_cast<std::size_t>(ASN1_STRING_length(value)));
  }
  pki_internal::NamesHandle alt_names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(certificate.get(), NID_subject_alt_name, nullptr, nullptr)));
  auto names = pki_internal::ReadSubjectAltNames(alt_names.get());
  if (!names) return std::unexpected(names.error());
  info.names.dns_names = std::move(names->dns_names);
  info.names.ip_addresses = std::move(names->ip_addresses);
  auto fingerprint = pki_internal::PublicKeyFingerprint(X509_get0_pubkey(certificate.get()));
  if (!fingerprint) return std::unexpected(fingerprint.error());
  info.public_key_fingerprint = std::move(*fingerprint);
  return info;
}

}  // namespace modelplane::core
