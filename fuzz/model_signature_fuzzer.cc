// libFuzzer target: arbitrary bytes as an OpenSSF model-signing bundle, and as the in-toto
// statement inside one.
//
// Parses the bundle and the statement (each refuses or returns values within their bounds), and
// runs the whole verifier on a revision that carries the bytes as its signature, against a
// policy with a key signer and a certificate signer: DER certificates, chains and ECDSA
// signatures of the attacker's choosing must end in a refusal, never a crash, and since nobody
// holds the policy key's private half, any acceptance aborts.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/signing/model_signature_verifier.h"
#include "core/signing/model_signing_statement.h"
#include "core/signing/sigstore_bundle.h"

namespace {

// A P-256 key made for this file whose private half was thrown away: no bundle anyone can
// make verifies with it, so an acceptance is a forged signature.
constexpr std::string_view kUnusableKey =
    "-----BEGIN PUBLIC KEY-----\n"
    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEDt57ub1h6hqJa4j5a9XlfsGfWzKn\n"
    "aHb+O2cwSLxJ1qPq2NYjZerlsZxRKNfeq+iBj0eNxOxAWiXt2ia7IFgpMA==\n"
    "-----END PUBLIC KEY-----\n";

// tests/core/signing/fixtures/ca-root.cert.pem: the corpus' certificate bundle chains to it, so
// chain building and identity checks run; its leaf's key was deleted when the fixtures were
// made, so no statement of the fuzzer's can carry a valid signature from it either.
constexpr std::string_view kFixtureRoot =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIB4zCCAWigAwIBAgIUQzKkSsvZoYZ+35FBM/O52slOs3wwCgYIKoZIzj0EAwIw\n"
    "HzEdMBsGA1UEAwwUbW9kZWxwbGFuZSB0ZXN0IHJvb3QwIBcNMjQwMTAxMDAwMDAw\n"
    "WhgPMjA1MDAxMDEwMDAwMDBaMB8xHTAbBgNVBAMMFG1vZGVscGxhbmUgdGVzdCBy\n"
    "b290MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEVru6AFNSgE1qtAMHMuz6ecmfBjDG\n"
    "wi0VpG2pEXwXsPWTE0esPEHn/GgGle512w/Q/ESickDnN4ksHzIoJfMtTLx2lUwI\n"
    "Nt5mV54m1s1EzpT7oQ8ppIBmDbq+Ws7foz+eo2MwYTAPBgNVHRMBAf8EBTADAQH/\n"
    "MB0GA1UdDgQWBBQepRoMgLXOywlXWQrZmyVVvZvtETAfBgNVHSMEGDAWgBQepRoM\n"
    "gLXOywlXWQrZmyVVvZvtETAOBgNVHQ8BAf8EBAMCAQYwCgYIKoZIzj0EAwIDaQAw\n"
    "ZgIxAJv0MOJ3wjBObpZ1uwRG5VxuBIiXzS4enPbOGHLlPIKcV/VAN96vxaFNL274\n"
    "Wtai7gIxANY7mtycpz1KM/HjgOkRab7Y5+cSgtaV+dBlKvXpOGHDAYip7XQ8UWef\n"
    "vxq/4Qy/+w==\n"
    "-----END CERTIFICATE-----\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace core = modelplane::core;
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  if (auto bundle = core::ParseSigstoreBundle(text)) {
    (void)core::ParseModelSigningStatement(bundle->payload);
    if (bundle->certificates.size() > core::kMaxBundleCertificates) std::abort();
  }
  if (auto manifest = core::ParseModelSigningStatement(text)) {
    for (const core::SignedModelFile& file : manifest->files) {
      if (file.sha256.size() != 71 || !file.sha256.starts_with("sha256:")) std::abort();
    }
  }

  static const core::SignaturePolicy policy = [] {
    core::SignaturePolicy made;
    made.signers.push_back({.name = "key", .public_key = std::string(kUnusableKey)});
    made.signers.push_back({.name = "pki",
                            .certificate_authorities = std::string(kFixtureRoot),
                            .identities = {"release@modelplane.test"}});
    return made;
  }();
  core::api::ModelRevisionSpec spec;
  spec.files = {{.path = "config.json",
                 .size = 2,
                 .sha256 = "sha256:" + std::string(64, 'a'),
                 .role = "config"}};
  spec.signatures = {{.bundle = std::string(text)}};
  const auto verdict = core::VerifyModelSignatures(
      &policy, "fuzz", spec, std::chrono::system_clock::time_point(std::chrono::hours(500'000)));
  if (verdict) std::abort();
  return 0;
}
