#include "core/pki/statement_signature.h"

#include <memory>

#include <openssl/err.h>
#include <openssl/pem.h>

#include "core/io/bounded_file.h"

namespace modelplane::core {
namespace {

using pki_internal::OpenSslError;

constexpr std::size_t kMaxBundleBytes = 256 * 1024;
constexpr std::size_t kMaxSignatureBytes = 1024;  // RSA-8192 is 1,024 bytes, ECDSA far less

struct DigestContextDeleter {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};
using DigestContext = std::unique_ptr<EVP_MD_CTX, DigestContextDeleter>;

std::string SignedBytes(std::string_view context, std::string_view message) {
  std::string bytes = "modelplane-statement";
  bytes.push_back('\0');
  bytes.append(context);
  bytes.push_back('\0');
  bytes.append(message);
  return bytes;
}

}  // namespace

Result<std::string> pki_internal::SignStatement(EVP_PKEY* key, std::string_view context,
                                                std::string_view message) {
  const std::string bytes = SignedBytes(context, message);
  DigestContext digest(EVP_MD_CTX_new());
  std::size_t length = 0;
  if (!digest || EVP_DigestSignInit(digest.get(), nullptr, EVP_sha256(), nullptr, key) != 1 ||
      EVP_DigestSign(digest.get(), nullptr, &length,
                     reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()) != 1) {
    return std::unexpected(OpenSslError(ErrorCode::kInternal, "signing a statement"));
  }
  std::string signature(length, '\0');
  if (EVP_DigestSign(digest.get(), reinterpret_cast<unsigned char*>(signature.data()), &length,
                     reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()) != 1) {
    return std::unexpected(OpenSslError(ErrorCode::kInternal, "signing a statement"));
  }
  signature.resize(length);
  return signature;
}

Result<StatementVerifier> StatementVerifier::FromCertificatePem(std::string_view pem) {
  auto bio = pki_internal::ReadBio(pem, kMaxBundleBytes, "CA certificate bundle");
  if (!bio) return std::unexpected(bio.error());
  std::vector<pki_internal::KeyHandle> keys;
  while (true) {
    pki_internal::CertificateHandle certificate(
        PEM_read_bio_X509(bio->get(), nullptr, nullptr, nullptr));
    if (!certificate) break;
    pki_internal::KeyHandle key(X509_get_pubkey(certificate.get()));
    if (!key) return std::unexpected(OpenSslError(ErrorCode::kInvalidArgument, "a CA's key"));
    keys.push_back(std::move(key));
  }
  ERR_clear_error();  // the read past the last certificate
  if (keys.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "no PEM certificate in the CA bundle");
  }
  return StatementVerifier(std::move(keys));
}

Result<StatementVerifier> StatementVerifier::FromCertificateFile(const std::string& path) {
  auto pem = ReadBoundedFile(path, kMaxBundleBytes);
  if (!pem) return std::unexpected(pem.error());
  auto verifier = FromCertificatePem(*pem);
  if (!verifier) return std::unexpected(verifier.error().Wrap(path));
  return verifier;
}

bool StatementVerifier::Verify(std::string_view context, std::string_view message,
                               std::string_view signature) const {
  if (signature.empty() || signature.size() > kMaxSignatureBytes) return false;
  const std::string bytes = SignedBytes(context, message);
  for (const pki_internal::KeyHandle& key : keys_) {
    DigestContext digest(EVP_MD_CTX_new());
    if (!digest ||
        EVP_DigestVerifyInit(digest.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1) {
      ERR_clear_error();
      continue;
    }
    const int verified = EVP_DigestVerify(
        digest.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
        reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
    ERR_clear_error();
    if (verified == 1) return true;
  }
  return false;
}

}  // namespace modelplane::core
