#include "core/pki/private_key.h"

#include <openssl/pem.h>

namespace modelplane::core {
namespace {

constexpr std::size_t kMaxKeyPemBytes = 64 * 1024;

}  // namespace

Result<PrivateKey> PrivateKey::Generate() {
  pki_internal::KeyHandle key(EVP_EC_gen("P-256"));
  if (!key) return std::unexpected(pki_internal::OpenSslError(ErrorCode::kInternal, "EVP_EC_gen"));
  auto fingerprint = pki_internal::PublicKeyFingerprint(key.get());
  if (!fingerprint) return std::unexpected(fingerprint.error());
  return PrivateKey(std::move(key), std::move(*fingerprint));
}

Result<PrivateKey> PrivateKey::FromPem(std::string_view pem) {
  auto bio = pki_internal::ReadBio(pem, kMaxKeyPemBytes, "private key PEM");
  if (!bio) return std::unexpected(bio.error());
  pki_internal::KeyHandle key(PEM_read_bio_PrivateKey(bio->get(), nullptr, nullptr, nullptr));
  if (!key) {
    return std::unexpected(
        pki_internal::OpenSslError(ErrorCode::kInvalidArgument, "reading a PEM private key"));
  }
  auto fingerprint = pki_internal::PublicKeyFingerprint(key.get());
  if (!fingerprint) return std::unexpected(fingerprint.error());
  return PrivateKey(std::move(key), std::move(*fingerprint));
}

std::string PrivateKey::ToPem() const {
  return pki_internal::WritePem([this](BIO* bio) {
    return PEM_write_bio_PrivateKey(bio, key_.get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
}

}  // namespace modelplane::core
