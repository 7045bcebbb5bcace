#include "core/signing/signing_keys.h"

#include <string>

#include <openssl/pem.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/digest/sha256.h"
#include "core/signing/sigstore_bundle.h"
#include "tests/core/signing/signing_fixtures.h"

namespace modelplane::core {
namespace {

using signing_test::ReadFixture;
using ::testing::HasSubstr;

TEST(SigningKeysTest, TheHintIsModelSigningsByteForByte) {
  for (const std::string name : {"key-p256", "key-p384"}) {
    SCOPED_TRACE(name);
    const std::string pem = ReadFixture(name + ".pub.pem");
    auto key = signing_internal::ReadSigningPublicKey(pem);
    ASSERT_TRUE(key) << key.error().ToString();
    // OpenSSL writes the PEM exactly as Python's cryptography did for model_signing...
    EXPECT_EQ(
        pki_internal::WritePem([&](BIO* bio) { return PEM_write_bio_PUBKEY(bio, key->get()); }),
        pem);
    // ...so the hint equals the one model_signing put in its bundle.
    auto bundle = ParseSigstoreBundle(ReadFixture("bundle-" + name + ".json"));
    ASSERT_TRUE(bundle) << bundle.error().ToString();
    EXPECT_EQ(signing_internal::ModelSigningKeyHint(key->get()), bundle->public_key_hint);
    EXPECT_EQ(bundle->public_key_hint, Sha256HexOf(pem));
  }
}

TEST(SigningKeysTest, TheHintDoesNotDependOnHowThePolicySpellsTheKey) {
  const std::string pem = ReadFixture("key-p256.pub.pem");
  std::string crlf;
  for (const char c : pem) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  auto key = signing_internal::ReadSigningPublicKey(crlf);
  ASSERT_TRUE(key) << key.error().ToString();
  EXPECT_EQ(signing_internal::ModelSigningKeyHint(key->get()), Sha256HexOf(pem));
}

TEST(SigningKeysTest, VerifiesTheDsseSignatureWithTheCurvesHash) {
  for (const std::string name : {"key-p256", "key-p384"}) {
    SCOPED_TRACE(name);
    auto key = signing_internal::ReadSigningPublicKey(ReadFixture(name + ".pub.pem"));
    ASSERT_TRUE(key) << key.error().ToString();
    auto bundle = ParseSigstoreBundle(ReadFixture("bundle-" + name + ".json"));
    ASSERT_TRUE(bundle) << bundle.error().ToString();
    EXPECT_TRUE(signing_internal::VerifyDsseSignature(key->get(), bundle->payload_type,
                                                      bundle->payload, bundle->signature));
    EXPECT_FALSE(signing_internal::VerifyDsseSignature(key->get(), "application/json",
                                                       bundle->payload, bundle->signature));
    EXPECT_FALSE(signing_internal::VerifyDsseSignature(key->get(), bundle->payload_type,
                                                       bundle->payload + " ", bundle->signature));
    EXPECT_FALSE(signing_internal::VerifyDsseSignature(
        key->get(), bundle->payload_type, bundle->payload, bundle->signature.substr(1)));
    EXPECT_FALSE(signing_internal::VerifyDsseSignature(key->get(), bundle->payload_type,
                                                       bundle->payload, ""));
  }
  // The P-384 bundle does not verify with the P-256 key.
  auto p256 = signing_internal::ReadSigningPublicKey(ReadFixture("key-p256.pub.pem"));
  auto bundle = ParseSigstoreBundle(ReadFixture("bundle-key-p384.json"));
  ASSERT_TRUE(p256 && bundle);
  EXPECT_FALSE(signing_internal::VerifyDsseSignature(p256->get(), bundle->payload_type,
                                                     bundle->payload, bundle->signature));
}

TEST(SigningKeysTest, RefusesWhatIsNotAPublicKey) {
  EXPECT_THAT(signing_internal::ReadSigningPublicKey("").error().message(), HasSubstr("empty"));
  EXPECT_THAT(
      signing_internal::ReadSigningPublicKey(ReadFixture("key-p256.key.pem")).error().message(),
      HasSubstr("not a PEM public key"));
  EXPECT_THAT(
      signing_internal::ReadSigningPublicKey(std::string(300 * 1024, 'A')).error().message(),
      HasSubstr("more than the"));
}

}  // namespace
}  // namespace modelplane::core
