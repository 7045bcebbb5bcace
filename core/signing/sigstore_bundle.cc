#include "core/signing/sigstore_bundle.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/api/limits.h"
#include "core/json/json_document.h"
#include "core/json/json_object_reader.h"
#include "core/text/base64.h"
#include "core/text/hex.h"

namespace modelplane::core {
namespace {

constexpr std::array<std::string_view, 2> kBundleMediaTypes = {
    "application/vnd.dev.sigstore.bundle.v0.3+json",
    "application/vnd.dev.sigstore.bundle.v0.2+json",
};
// base64 of a DER ECDSA signature is under 200 characters; of a certificate a few KiB. The
// bundle's own bound caps their sum; these stop one field from taking all of it.
constexpr std::size_t kMaxSignatureText = 1024;
constexpr std::size_t kMaxCertificateText = 64 * 1024;
constexpr std::size_t kMaxHintText = 128;
constexpr std::size_t kSha256HexLength = 64;
// model-signing's bundles nest five deep; Sigstore's transparency-log entries, which are not
// read, a few more.
constexpr int kMaxBundleDepth = 16;

bool Has(const JsonObjectReader& reader, std::string_view key) {
  const auto it = reader.object().find(key);
  return it != reader.object().end() && !it->is_null();
}

Result<JsonObjectReader> RequiredChild(const JsonObjectReader& reader, std::string_view key) {
  auto value = reader.Find(key, Presence::kRequired);
  if (!value) return std::unexpected(value.error());
  return JsonObjectReader::Create(**value, reader.PathOf(key));
}

Status ReadBase64(const JsonObjectReader& reader, std::string_view key, std::size_t max_length,
                  std::string& out) {
  std::string text;
  MODELPLANE_JSON_TRY(reader.String(key, text, max_length, Presence::kRequired));
  auto decoded = DecodeBase64(text, reader.PathOf(key));
  if (!decoded) return std::unexpected(decoded.error());
  if (decoded->empty()) return FieldError(reader.PathOf(key), "is empty");
  out = std::move(*decoded);
  return Ok();
}

Status ReadPublicKeyIdentifier(const JsonObjectReader& reader, SigstoreBundle& bundle) {
  std::string hint;
  MODELPLANE_JSON_TRY(reader.String("hint", hint, kMaxHintText));
  if (hint.empty()) return Ok();  // bundles of model-signing before 1.0 carry none
  std::array<std::uint8_t, kSha256HexLength / 2> bytes{};
  if (hint.size() != kSha256HexLength || !DecodeHex(hint, bytes)) {
    return FieldError(reader.PathOf("hint"), "must be 64 hex digits (sha256 of the PEM key)");
  }
  bundle.public_key_hint = EncodeHex(bytes);
  return Ok();
}

Status ReadCertificateChain(const JsonObjectReader& reader, SigstoreBundle& bundle) {
  auto certificates = reader.Find("certificates", Presence::kRequired);
  if (!certificates) return std::unexpected(certificates.error());
  const std::string path = reader.PathOf("certificates");
  if (!(*certificates)->is_array() || (*certificates)->empty()) {
    return FieldError(path, "must be a non-empty array");
  }
  if ((*certificates)->size() > kMaxBundleCertificates) {
    return FieldError(path, fmt::format("holds {} certificates, more than the {} allowed",
                                        (*certificates)->size(), kMaxBundleCertificates));
  }
  for (std::size_t i = 0; i < (*certificates)->size(); ++i) {
    auto item = JsonObjectReader::Create((**certificates)[i], fmt::format("{}[{}]", path, i));
    if (!item) return std::unexpected(item.error());
    std::string der;
    MODELPLANE_JSON_TRY(ReadBase64(*item, "rawBytes", kMaxCertificateText, der));
    bundle.certificates.push_back(std::move(der));
  }
  return Ok();
}

Status ReadVerificationMaterial(const JsonObjectReader& reader, SigstoreBundle& bundle) {
  // Keyless Sigstore signing puts a Fulcio certificate here and needs the transparency log,
  // which a cluster that stages models offline cannot reach.
  if (Has(reader, "certificate")) {
    return FieldError(reader.PathOf("certificate"),
                      "keyless Sigstore signatures are not supported; sign with `model_signing "
                      "sign key` or `model_signing sign certificate`");
  }
  const bool has_key = Has(reader, "publicKey");
  const bool has_chain = Has(reader, "x509CertificateChain");
  if (has_key && has_chain) {
    return FieldError(reader.path(), "must hold publicKey or x509CertificateChain, not both");
  }
  if (has_key) {
    auto key_reader = RequiredChild(reader, "publicKey");
    if (!key_reader) return std::unexpected(key_reader.error());
    return ReadPublicKeyIdentifier(*key_reader, bundle);
  }
  if (has_chain) {
    auto chain_reader = RequiredChild(reader, "x509CertificateChain");
    if (!chain_reader) return std::unexpected(chain_reader.error());
    return ReadCertificateChain(*chain_reader, bundle);
  }
  return Ok();  // neither: an old key-mode bundle; the verifier tries every key
}

Status ReadEnvelope(const JsonObjectReader& reader, SigstoreBundle& bundle) {
  MODELPLANE_JSON_TRY(reader.String("payloadType", bundle.payload_type, 256, Presence::kRequired));
  MODELPLANE_JSON_TRY(
      ReadBase64(reader, "payload", api::kMaxSignatureBundleLength, bundle.payload));
  auto signatures = reader.Find("signatures", Presence::kRequired);
  if (!signatures) return std::unexpected(signatures.error());
  const std::string path = reader.PathOf("signatures");
  if (!(*signatures)->is_array()) return FieldError(path, "must be an array");
  if ((*signatures)->size() != 1) {
    // model-signing writes one; with more, which one vouches would be ours to guess.
    return FieldError(
        path, fmt::format("must hold exactly one signature, holds {}", (*signatures)->size()));
  }
  auto signature = JsonObjectReader::Create((**signatures)[0], path + "[0]");
  if (!signature) return std::unexpected(signature.error());
  return ReadBase64(*signature, "sig", kMaxSignatureText, bundle.signature);
}

}  // namespace

Result<SigstoreBundle> ParseSigstoreBundle(std::string_view json_text) {
  auto document = ParseJsonDocument(
      json_text, {.max_bytes = api::kMaxSignatureBundleLength, .max_depth = kMaxBundleDepth});
  if (!document) return std::unexpected(document.error());
  auto reader = JsonObjectReader::Create(*document, "");
  if (!reader) return std::unexpected(reader.error());

  SigstoreBundle bundle;
  MODELPLANE_JSON_TRY(reader->String("mediaType", bundle.media_type, 256, Presence::kRequired));
  if (std::ranges::find(kBundleMediaTypes, bundle.media_type) == kBundleMediaTypes.end()) {
    return FieldError("mediaType",
                      fmt::format("\"{}\" is not a Sigstore bundle media type this "
                                  "verifier reads ({} or {})",
                                  bundle.media_type, kBundleMediaTypes[0], kBundleMediaTypes[1]));
  }
  if (Has(*reader, "messageSignature")) {
    return FieldError("messageSignature",
                      "is not supported: model-signing bundles carry a dsseEnvelope");
  }
  auto material = RequiredChild(*reader, "verificationMaterial");
  if (!material) return std::unexpected(material.error());
  MODELPLANE_JSON_TRY(ReadVerificationMaterial(*material, bundle));
  auto envelope = RequiredChild(*reader, "dsseEnvelope");
  if (!envelope) return std::unexpected(envelope.error());
  MODELPLANE_JSON_TRY(ReadEnvelope(*envelope, bundle));
  return bundle;
}

std::string DssePreAuthenticationEncoding(std::string_view payload_type, std::string_view payload) {
  std::string encoded =
      fmt::format("DSSEv1 {} {} {} ", payload_type.size(), payload_type, payload.size());
  encoded.append(payload);
  return encoded;
}

}  // namespace modelplane::core
