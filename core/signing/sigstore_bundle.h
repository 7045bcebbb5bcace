// The Sigstore bundle that OpenSSF's model-signing tool writes (`model_signing sign key` and
// `model_signing sign certificate`, media types application/vnd.dev.sigstore.bundle.v0.3+json
// and v0.2): a DSSE envelope around an in-toto statement, with the verification material that
// names the key (a hint: sha256 of its PEM SubjectPublicKeyInfo) or carries the signing
// certificate and its chain (DER, leaf first).
//
// Parsing is bounded and strict: the JSON text at most kMaxSignatureBundleLength, one
// signature, at most kMaxBundleCertificates certificates, every base64 field decoded here, so
// that the verifier works on bytes. Transparency-log entries are not read (no log is
// reachable from a cluster that stages models offline; keyless Sigstore signing is not yet
// supported, see docs/security.md).
//
// Thread safety: plain values and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"

namespace modelplane::core {

inline constexpr std::size_t kMaxBundleCertificates = 8;
inline constexpr std::string_view kInTotoPayloadType = "application/vnd.in-toto+json";

struct SigstoreBundle {
  std::string media_type;
  std::string payload_type;  // the DSSE envelope's; must be kInTotoPayloadType to verify
  std::string payload;       // decoded: the in-toto statement's JSON bytes, as signed
  std::string signature;     // decoded: the DSSE signature (DER ECDSA)
  // Key mode: sha256 hex of the signing key's PEM SubjectPublicKeyInfo text (model-signing's
  // hint); empty when the bundle carries certificates or an old bundle carries no hint.
  std::string public_key_hint;
  std::vector<std::string> certificates;  // DER, signing certificate first; empty in key mode
};

// kInvalidArgument naming the field for anything malformed, oversized or unsupported.
[[nodiscard]] Result<SigstoreBundle> ParseSigstoreBundle(std::string_view json_text);

// DSSE v1 pre-authentication encoding: "DSSEv1 <len(type)> <type> <len(payload)> <payload>",
// the bytes a DSSE signature covers.
[[nodiscard]] std::string DssePreAuthenticationEncoding(std::string_view payload_type,
                                                        std::string_view payload);

}  // namespace modelplane::core
