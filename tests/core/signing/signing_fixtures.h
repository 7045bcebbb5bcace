// The fixtures of tests/core/signing/fixtures (made by the real model_signing tool, see
// make_fixtures.py there) and small helpers to build bundles and policies from them.
//
// Thread safety: functions of the test binary; no shared state.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <gtest/gtest.h>

#include "core/api/model_revision.h"
#include "core/signing/sigstore_bundle.h"
#include "core/text/base64.h"
#include "tests/support/signing_fixtures.h"

namespace modelplane::core::signing_test {

inline std::string ReadFixture(std::string_view name) {
  std::string text = modelplane::testing::SigningFixture(std::string(name));
  EXPECT_FALSE(text.empty()) << "cannot read fixture " << name;
  return text;
}

// spec.files of the signed model (fixtures/files.json), with roles as a revision would have.
inline std::vector<api::ModelFile> SignedFiles() {
  std::vector<api::ModelFile> files;
  for (const nlohmann::json& file : nlohmann::json::parse(ReadFixture("files.json"))) {
    files.push_back({.path = file.at("path").get<std::string>(),
                     .size = file.at("size").get<std::int64_t>(),
                     .sha256 = file.at("sha256").get<std::string>(),
                     .role = std::string(api::kRoleConfig)});
  }
  return files;
}

// "sha256:<hex of DER SPKI>" of a fixture key, as Python's cryptography computed it.
inline std::string Fingerprint(std::string_view key_name) {
  return modelplane::testing::FixtureKeyFingerprint(std::string(key_name));
}

inline api::ModelRevisionSpec SpecWith(std::vector<std::string> bundles) {
  api::ModelRevisionSpec spec;
  spec.files = SignedFiles();
  for (std::string& bundle : bundles) spec.signatures.push_back({.bundle = std::move(bundle)});
  return spec;
}

// The time the tests verify at: inside the leaf's validity (2025..2045), after the expired
// leaf's (2020..2021).
inline std::chrono::system_clock::time_point VerificationTime() {
  using namespace std::chrono;
  return sys_days{year{2026} / June / 1};
}

// The decoded statement of a bundle.
inline std::string PayloadOf(std::string_view bundle_text) {
  const nlohmann::json bundle = nlohmann::json::parse(bundle_text);
  return DecodeBase64(bundle.at("dsseEnvelope").at("payload").get<std::string>(), "payload")
      .value();
}

// The bundle with its statement replaced, signature and verification material kept.
inline std::string WithPayload(std::string_view bundle_text, std::string_view payload) {
  nlohmann::json bundle = nlohmann::json::parse(bundle_text);
  bundle["dsseEnvelope"]["payload"] = EncodeBase64(payload);
  return bundle.dump();
}

// A key-mode bundle made here, as model_signing makes them: `payload` signed over the DSSE
// encoding with a fixture's private key (SHA-256: the fixtures' P-256 keys), and that key's
// hint. For statements the real tool would never write.
inline std::string SignedBundle(std::string_view private_key_fixture, std::string_view payload,
                                std::string_view payload_type = kInTotoPayloadType) {
  const std::string pem = ReadFixture(private_key_fixture);
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr), &EVP_PKEY_free);
  EXPECT_TRUE(key);
  const std::string signed_bytes = DssePreAuthenticationEncoding(payload_type, payload);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                  &EVP_MD_CTX_free);
  std::size_t length = 0;
  EXPECT_EQ(EVP_DigestSignInit(context.get(), nullptr, EVP_sha256(), nullptr, key.get()), 1);
  EXPECT_EQ(EVP_DigestSign(context.get(), nullptr, &length,
                           reinterpret_cast<const unsigned char*>(signed_bytes.data()),
                           signed_bytes.size()),
            1);
  std::string signature(length, '\0');
  EXPECT_EQ(EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()),
                           &length, reinterpret_cast<const unsigned char*>(signed_bytes.data()),
                           signed_bytes.size()),
            1);
  signature.resize(length);
  // The hint of the key's public half: the fixture bundle made with the same key carries it.
  std::string key_name(private_key_fixture.substr(0, private_key_fixture.find(".key.pem")));
  const nlohmann::json reference =
      nlohmann::json::parse(ReadFixture(fmt::format("bundle-{}.json", key_name)));
  nlohmann::json bundle = reference;
  bundle["dsseEnvelope"] = {
      {"payload", EncodeBase64(payload)},
      {"payloadType", payload_type},
      {"signatures", {{{"sig", EncodeBase64(signature)}, {"keyid", ""}}}},
  };
  return bundle.dump();
}

inline std::string Indented(std::string_view text, int indent) {
  return modelplane::testing::IndentedLines(text, indent);
}

}  // namespace modelplane::core::signing_test
