#include "core/signing/signing_keys.h"

#include <array>
#include <memory>

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include "core/digest/sha256.h"
#include "core/signing/sigstore_bundle.h"

namespace modelplane::core::signing_internal {
namespace {

// ECDSA signatures are at most 139 bytes (P-521, DER); anything far longer is not one.
constexpr std::size_t kMaxSignatureBytes = 512;

struct DigestContextDeleter {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};
using DigestContext = std::unique_ptr<EVP_MD_CTX, DigestContextDeleter>;

// The curve's name as OpenSSL spells it ("prime256v1", "secp384r1", ...); empty for non-EC keys.
std::string CurveName(EVP_PKEY* key) {
  if (EVP_PKEY_get_base_id(key) != EVP_PKEY_EC) return {};
  std::array<char, 64> name{};
  std::size_t length = 0;
  if (EVP_PKEY_get_group_name(key, name.data(), name.size(), &length) != 1) {
    ERR_clear_error();
    return {};
  }
  return std::string(name.data(), length);
}

// The hash model-signing signs with on the key's curve (its get_ec_key_hash); null when the
// key is not one it supports.
const EVP_MD* SigningDigest(EVP_PKEY* key) {
  const std::string curve = CurveName(key);
  if (curve == "prime256v1") return EVP_sha256();
  if (curve == "secp384r1") return EVP_sha384();
  if (curve == "secp521r1") return EVP_sha512();
  return nullptr;
}

}  // namespace

Status CheckSigningKey(EVP_PKEY* key) {
  if (SigningDigest(key) != nullptr) return Ok();
  const std::string curve = CurveName(key);
  return MakeError(ErrorCode::kInvalidArgument,
                   curve.empty() ? std::string("the key is not an EC key (model-signing signs "
                                               "with EC P-256, P-384 or P-521 keys)")
                                 : fmt::format("the key's curve {} is not P-256, P-384 or P-521 "
                                               "(what model-signing signs with)",
                                               curve));
}

Result<pki_internal::KeyHandle> ReadSigningPublicKey(std::string_view pem) {
  auto bio = pki_internal::ReadBio(pem, kMaxPolicyPemBytes, "public key PEM");
  if (!bio) return std::unexpected(bio.error());
  pki_internal::KeyHandle key(PEM_read_bio_PUBKEY(bio->get(), nullptr, nullptr, nullptr));
  if (!key) {
    return std::unexpected(pki_internal::OpenSslError(
        ErrorCode::kInvalidArgument, "not a PEM public key (-----BEGIN PUBLIC KEY-----)"));
  }
  if (auto status = CheckSigningKey(key.get()); !status) return std::unexpected(status.error());
  return key;
}

std::string ModelSigningKeyHint(EVP_PKEY* key) {
  const std::string pem =
      pki_internal::WritePem([key](BIO* bio) { return PEM_write_bio_PUBKEY(bio, key); });
  if (pem.empty()) {
    ERR_clear_error();
    return {};
  }
  return Sha256HexOf(pem);
}

bool VerifyDsseSignature(EVP_PKEY* key, std::string_view payload_type, std::string_view payload,
                         std::string_view signature) {
  const EVP_MD* digest = SigningDigest(key);
  if (digest == nullptr || signature.empty() || signature.size() > kMaxSignatureBytes) {
    return false;
  }
  const std::string signed_bytes = DssePreAuthenticationEncoding(payload_type, payload);
  DigestContext context(EVP_MD_CTX_new());
  const bool verified =
      context && EVP_DigestVerifyInit(context.get(), nullptr, digest, nullptr, key) == 1 &&
      EVP_DigestVerify(
          context.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
          reinterpret_cast<const unsigned char*>(signed_bytes.data()), signed_bytes.size()) == 1;
  ERR_clear_error();  // a failed verification queues its reason; it is answered with false
  return verified;
}

}  // namespace modelplane::core::signing_internal
