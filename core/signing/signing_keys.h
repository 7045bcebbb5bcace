// The signing keys model-signing uses, as core/signing reads and checks them: EC keys on P-256,
// P-384 or P-521 (what `model_signing sign key|certificate` accepts), each signing with the
// hash its curve calls for, and model-signing's key hint. One place for these, shared by the
// policy binder (which checks a configured key when the config is read) and the verifier.
// Internal to core/signing.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/error/error.h"
#include "core/pki/openssl_handles.h"

namespace modelplane::core::signing_internal {

// Policy PEM text (a key or a CA bundle) above this is refused before parsing.
inline constexpr std::size_t kMaxPolicyPemBytes = 256 * 1024;

// kInvalidArgument unless `key` is an EC key on P-256, P-384 or P-521.
[[nodiscard]] Status CheckSigningKey(EVP_PKEY* key);

// A PEM public key (SubjectPublicKeyInfo) that CheckSigningKey accepts.
[[nodiscard]] Result<pki_internal::KeyHandle> ReadSigningPublicKey(std::string_view pem);

// model-signing's hint for a key: sha256 hex of its PEM SubjectPublicKeyInfo text, exactly as
// OpenSSL (and Python's cryptography, which model-signing uses) writes it. Empty on failure.
[[nodiscard]] std::string ModelSigningKeyHint(EVP_PKEY* key);

// Whether `signature` (DER ECDSA) is the key's signature over the DSSE pre-authentication
// encoding of the payload, with the hash the key's curve calls for.
[[nodiscard]] bool VerifyDsseSignature(EVP_PKEY* key, std::string_view payload_type,
                                       std::string_view payload, std::string_view signature);

}  // namespace modelplane::core::signing_internal
