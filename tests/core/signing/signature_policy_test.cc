#include "core/signing/signature_policy.h"

#include <memory>
#include <string>

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config/config_loader.h"
#include "tests/core/signing/signing_fixtures.h"

namespace modelplane::core {
namespace {

using signing_test::Indented;
using signing_test::ReadFixture;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string KeySigner(std::string_view name, std::string_view pem) {
  return fmt::format("  - name: {}\n    publicKey: |\n{}", name, Indented(pem, 6));
}

std::string PolicyRefusal(const std::string& yaml) {
  auto policy = LoadConfigString<SignaturePolicy>(yaml);
  if (policy) return "";
  return policy.error().message();
}

// A new key's PEM public key: EC on `curve`, or RSA or Ed25519 when `curve` is null.
std::string PublicKeyPem(const char* type, const char* curve = nullptr) {
  EVP_PKEY* made = nullptr;
  if (curve != nullptr) {
    made = EVP_PKEY_Q_keygen(nullptr, nullptr, type, curve);
  } else if (std::string_view(type) == "RSA") {
    made = EVP_PKEY_Q_keygen(nullptr, nullptr, type, std::size_t{1024});
  } else {
    made = EVP_PKEY_Q_keygen(nullptr, nullptr, type);
  }
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(made, &EVP_PKEY_free);
  EXPECT_TRUE(key);
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
  EXPECT_EQ(PEM_write_bio_PUBKEY(bio.get(), key.get()), 1);
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(length));
}

TEST(SignaturePolicyTest, BindsKeyAndCertificateSigners) {
  const std::string yaml = fmt::format(
      "required: [team-a]\n"
      "signers:\n"
      "{}"
      "    namespaces: [team-a]\n"
      "{}"
      "  - name: corp-release\n"
      "    certificateAuthorities: |\n{}"
      "    identities: [release@modelplane.test, spiffe://modelplane.test/release]\n",
      KeySigner("release-p256", ReadFixture("key-p256.pub.pem")),
      KeySigner("release-p384", ReadFixture("key-p384.pub.pem")),
      Indented(ReadFixture("ca-root.cert.pem") + ReadFixture("other-ca-root.cert.pem"), 6));
  auto policy = LoadConfigString<SignaturePolicy>(yaml);
  ASSERT_TRUE(policy) << policy.error().ToString();
  EXPECT_THAT(policy->required, ElementsAre("team-a"));
  ASSERT_EQ(policy->signers.size(), 3U);
  EXPECT_EQ(policy->signers[0].name, "release-p256");
  EXPECT_EQ(policy->signers[0].public_key, ReadFixture("key-p256.pub.pem"));
  EXPECT_THAT(policy->signers[0].namespaces, ElementsAre("team-a"));
  EXPECT_TRUE(policy->signers[1].namespaces.empty());
  EXPECT_THAT(policy->signers[2].identities,
              ElementsAre("release@modelplane.test", "spiffe://modelplane.test/release"));
  EXPECT_TRUE(policy->signers[2].public_key.empty());

  // Both sections optional: an empty policy requires nothing and trusts no one.
  auto empty = LoadConfigString<SignaturePolicy>("{}");
  ASSERT_TRUE(empty) << empty.error().ToString();
  EXPECT_TRUE(empty->signers.empty());
}

TEST(SignaturePolicyTest, RefusesSignersWithoutExactlyOneMode) {
  EXPECT_THAT(PolicyRefusal("signers:\n  - namespaces: [a]\n"),
              HasSubstr("signers[0].name': required field is missing"));
  EXPECT_THAT(PolicyRefusal("signers:\n  - name: \"\"\n    publicKey: x\n"),
              HasSubstr("name must have 1 to 253 characters"));
  EXPECT_THAT(PolicyRefusal(
                  fmt::format("signers:\n  - name: {}\n    publicKey: x\n", std::string(254, 'n'))),
              HasSubstr("name must have 1 to 253 characters"));
  EXPECT_THAT(PolicyRefusal("signers:\n  - name: nothing\n"),
              HasSubstr("signer \"nothing\" must have exactly one of publicKey (key mode) and "
                        "certificateAuthorities (certificate mode)"));
  EXPECT_THAT(PolicyRefusal(
                  fmt::format("signers:\n{}    certificateAuthorities: |\n{}    identities: [a]\n",
                              KeySigner("both", ReadFixture("key-p256.pub.pem")),
                              Indented(ReadFixture("ca-root.cert.pem"), 6))),
              HasSubstr("signer \"both\" must have exactly one of publicKey"));
  // A misspelt key is named (checked once the signer itself is sound).
  EXPECT_THAT(PolicyRefusal(fmt::format("signers:\n{}    namespace: [a]\n",
                                        KeySigner("typo", ReadFixture("key-p256.pub.pem")))),
              HasSubstr("namespace"));
}

TEST(SignaturePolicyTest, ChecksEveryKeyWhenTheConfigIsRead) {
  EXPECT_THAT(PolicyRefusal(fmt::format("signers:\n{}", KeySigner("broken", "not a key\n"))),
              HasSubstr("signer \"broken\": publicKey: not a PEM public key"));
  // A certificate is not a public key.
  EXPECT_THAT(PolicyRefusal(fmt::format("signers:\n{}",
                                        KeySigner("certificate", ReadFixture("leaf.cert.pem")))),
              HasSubstr("not a PEM public key"));
  EXPECT_THAT(PolicyRefusal(fmt::format("signers:\n{}", KeySigner("rsa", PublicKeyPem("RSA")))),
              HasSubstr("signer \"rsa\": publicKey: the key is not an EC key"));
  EXPECT_THAT(PolicyRefusal(fmt::format("signers:\n{}", KeySigner("ed", PublicKeyPem("ED25519")))),
              HasSubstr("the key is not an EC key"));
  EXPECT_THAT(
      PolicyRefusal(fmt::format("signers:\n{}", KeySigner("p224", PublicKeyPem("EC", "P-224")))),
      HasSubstr("the key's curve secp224r1 is not P-256, P-384 or P-521"));
  // P-521 is one model-signing signs with.
  EXPECT_EQ(
      PolicyRefusal(fmt::format("signers:\n{}", KeySigner("p521", PublicKeyPem("EC", "P-521")))),
      "");
}

TEST(SignaturePolicyTest, CertificateSignersNeedAuthoritiesAndIdentities) {
  const std::string authorities = Indented(ReadFixture("ca-root.cert.pem"), 6);
  EXPECT_THAT(PolicyRefusal(fmt::format(
                  "signers:\n  - name: corp\n    certificateAuthorities: |\n{}", authorities)),
              HasSubstr("signer \"corp\": identities must list the subjectAltNames"));
  EXPECT_THAT(
      PolicyRefusal(fmt::format("signers:\n  - name: corp\n    certificateAuthorities: |\n{}"
                                "    identities: [\"\"]\n",
                                authorities)),
      HasSubstr("identities must not be empty strings"));
  EXPECT_THAT(PolicyRefusal("signers:\n  - name: corp\n    certificateAuthorities: |\n"
                            "      -----BEGIN CERTIFICATE-----\n      AAAA\n"
                            "      -----END CERTIFICATE-----\n    identities: [a@b]\n"),
              HasSubstr("signer \"corp\": certificateAuthorities holds no PEM certificate"));
  EXPECT_THAT(PolicyRefusal(fmt::format("signers:\n{}    identities: [a@b]\n",
                                        KeySigner("key", ReadFixture("key-p256.pub.pem")))),
              HasSubstr("signer \"key\": identities apply to certificate mode only"));
}

TEST(SignaturePolicyTest, RefusesTwoSignersOfOneName) {
  const std::string key = ReadFixture("key-p256.pub.pem");
  EXPECT_THAT(PolicyRefusal(fmt::format("signers:\n{}{}", KeySigner("release", key),
                                        KeySigner("release", key))),
              HasSubstr("signers: \"release\" is named twice"));
}

TEST(SignaturePolicyTest, NamespacesAndStarSelect) {
  SignaturePolicy policy{.required = {"team-a"}, .signers = {}};
  EXPECT_TRUE(RequiresSignature(policy, "team-a"));
  EXPECT_FALSE(RequiresSignature(policy, "team-b"));
  policy.required = {"*"};
  EXPECT_TRUE(RequiresSignature(policy, "anything"));
  policy.required = {};
  EXPECT_FALSE(RequiresSignature(policy, "team-a"));

  SignerRule rule{.name = "r"};
  EXPECT_TRUE(SignerServes(rule, "team-a"));
  rule.namespaces = {"team-a"};
  EXPECT_TRUE(SignerServes(rule, "team-a"));
  EXPECT_FALSE(SignerServes(rule, "team-b"));
  EXPECT_FALSE(SignerServes(rule, "team-a-b"));
  rule.namespaces = {"team-b", "*"};
  EXPECT_TRUE(SignerServes(rule, "team-a"));
}

}  // namespace
}  // namespace modelplane::core
