// The model-signing fixtures (tests/core/signing/fixtures, made by the real `model_signing`
// tool with make_fixtures.py) as the cluster tests use them: the signed files as a revision's
// spec.files, each bundle's text, the signature policy that trusts the fixture signers, and a
// signing key's fingerprint as a ModelRevocation names it.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace modelplane::testing {

// Signer names in SignaturePolicyYaml.
inline constexpr std::string_view kFixtureKeySigner = "release-key";
inline constexpr std::string_view kFixtureCertificateSigner = "release-pki";
inline constexpr std::string_view kFixtureIdentity = "release@modelplane.test";

// The text of tests/core/signing/fixtures/<name>; empty when it cannot be read.
[[nodiscard]] std::string SigningFixture(const std::string& name);

// A fixture bundle whose signed statement was edited after signing (the first file's digest
// replaced), signature and key hint kept: what an attacker who swaps a file would send.
[[nodiscard]] std::string TamperedSigningFixture(const std::string& name);

// spec.files of the signed model folder, with roles.
[[nodiscard]] nlohmann::json SignedModelFiles();

// The `signatures` mapping of a source policy as block YAML, every line indented by `indent`
// spaces: the P-256 key (kFixtureKeySigner) and the fixture root CA with kFixtureIdentity
// (kFixtureCertificateSigner), both for every namespace; `required` lists namespaces.
[[nodiscard]] std::string SignaturePolicyYaml(int indent,
                                              const std::vector<std::string>& required = {});

// "sha256:<hex>" of the DER SubjectPublicKeyInfo of a fixture key ("key-p256", "key-p384",
// "leaf"), as Python's cryptography computed it when the fixtures were made (fingerprints.json):
// not by the code under test.
[[nodiscard]] std::string FixtureKeyFingerprint(const std::string& key_name);

// `text`'s lines, each indented by `indent` spaces (a YAML block scalar's body).
[[nodiscard]] std::string IndentedLines(std::string_view text, int indent);

}  // namespace modelplane::testing
