#include "core/signing/sigstore_bundle.h"

#include <string>

#include <nlohmann/json.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/api/limits.h"
#include "tests/core/signing/signing_fixtures.h"

namespace modelplane::core {
namespace {

using signing_test::ReadFixture;
using ::testing::HasSubstr;

// The message of the refusal to parse `bundle`, or "" when it parsed.
std::string BundleRefusal(const nlohmann::json& bundle) {
  auto parsed = ParseSigstoreBundle(bundle.dump());
  if (parsed) return "";
  EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument);
  return parsed.error().message();
}

nlohmann::json KeyBundle() {
  return nlohmann::json::parse(ReadFixture("bundle-key-p256.json"));
}

TEST(SigstoreBundleTest, ReadsAKeyModeBundleOfModelSigning) {
  const std::string text = ReadFixture("bundle-key-p256.json");
  auto bundle = ParseSigstoreBundle(text);
  ASSERT_TRUE(bundle) << bundle.error().ToString();
  EXPECT_EQ(bundle->media_type, "application/vnd.dev.sigstore.bundle.v0.3+json");
  EXPECT_EQ(bundle->payload_type, kInTotoPayloadType);
  EXPECT_EQ(bundle->payload, signing_test::PayloadOf(text));
  EXPECT_THAT(bundle->payload, HasSubstr("https://model_signing/signature/v1.0"));
  EXPECT_EQ(
      bundle->public_key_hint,
      nlohmann::json::parse(text)["verificationMaterial"]["publicKey"]["hint"].get<std::string>());
  EXPECT_EQ(bundle->public_key_hint.size(), 64U);
  EXPECT_TRUE(bundle->certificates.empty());
  // DER ECDSA: a SEQUENCE of two INTEGERs.
  ASSERT_GE(bundle->signature.size(), 8U);
  EXPECT_EQ(static_cast<unsigned char>(bundle->signature[0]), 0x30);
}

TEST(SigstoreBundleTest, ReadsACertificateModeBundleLeafFirst) {
  auto bundle = ParseSigstoreBundle(ReadFixture("bundle-certificate.json"));
  ASSERT_TRUE(bundle) << bundle.error().ToString();
  EXPECT_TRUE(bundle->public_key_hint.empty());
  // Leaf, then the chain the signer passed: intermediate and root.
  ASSERT_EQ(bundle->certificates.size(), 3U);
  for (const std::string& der : bundle->certificates) {
    EXPECT_EQ(static_cast<unsigned char>(der.at(0)), 0x30);
  }
}

TEST(SigstoreBundleTest, AcceptsV02AndBundlesWithoutAHint) {
  nlohmann::json bundle = KeyBundle();
  bundle["mediaType"] = "application/vnd.dev.sigstore.bundle.v0.2+json";
  EXPECT_EQ(BundleRefusal(bundle), "");
  bundle["verificationMaterial"]["publicKey"].erase("hint");
  auto parsed = ParseSigstoreBundle(bundle.dump());
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_TRUE(parsed->public_key_hint.empty());
  bundle["verificationMaterial"].erase("publicKey");
  EXPECT_EQ(BundleRefusal(bundle), "");
}

TEST(SigstoreBundleTest, RefusesWhatIsNotABundle) {
  EXPECT_FALSE(ParseSigstoreBundle("not json"));
  EXPECT_FALSE(ParseSigstoreBundle(""));
  EXPECT_THAT(BundleRefusal(nlohmann::json::array()), HasSubstr("must be an object"));

  nlohmann::json bundle = KeyBundle();
  bundle["mediaType"] = "application/vnd.dev.sigstore.bundle.v0.1+json";
  EXPECT_THAT(BundleRefusal(bundle),
              HasSubstr("mediaType: \"application/vnd.dev.sigstore.bundle.v0.1"
                        "+json\" is not a Sigstore bundle media type"));
  bundle.erase("mediaType");
  EXPECT_THAT(BundleRefusal(bundle), HasSubstr("mediaType: is required"));

  bundle = KeyBundle();
  bundle.erase("dsseEnvelope");
  EXPECT_THAT(BundleRefusal(bundle), HasSubstr("dsseEnvelope: is required"));
  bundle["messageSignature"] = nlohmann::json::object();
  EXPECT_THAT(BundleRefusal(bundle), HasSubstr("messageSignature: is not supported"));

  bundle = KeyBundle();
  bundle.erase("verificationMaterial");
  EXPECT_THAT(BundleRefusal(bundle), HasSubstr("verificationMaterial: is required"));
}

TEST(SigstoreBundleTest, NeedsExactlyOneSignature) {
  nlohmann::json bundle = KeyBundle();
  bundle["dsseEnvelope"]["signatures"] = nlohmann::json::array();
  EXPECT_THAT(BundleRefusal(bundle), HasSubstr("dsseEnvelope.signatures: must hold exactly one "
                                               "signature, holds 0"));
  const nlohmann::json signature = KeyBundle()["dsseEnvelope"]["signatures"][0];
  bundle["dsseEnvelope"]["signatures"] = {signature, signature};
  EXPECT_THAT(BundleRefusal(bundle), HasSubstr("holds 2"));
  bundle["dsseEnvelope"]["signatures"] = {{{"keyid", ""}}};
  EXPECT_THAT(BundleRefusal(bundle), HasSubstr("dsseEnvelope.signatures[0].sig: is required"));
}

TEST(SigstoreBundleTest, DecodesEveryBase64FieldStrictly) {
  nlohmann::json bundle = KeyBundle();
  bundle["dsseEnvelope"]["payload"] = "not base64!";
  EXPECT_THAT(BundleRefusal(bundle), HasSubstr("dsseEnvelope.payload is not valid base64"));
  bundle["dsseEnvelope"]["payload"] = "";
  EXPECT_THAT(BundleRefusal(bundle), HasSubstr("dsseEnvelope.payload: is empty"));

  bundle = KeyBundle();
  bundle["dsseEnvelope"]["signatures"][0]["sig"] = "QUJD=";
  EXPECT_THAT(BundleRefusal(bundle),
              HasSubstr("dsseEnvelope.signatures[0].sig is not valid base64"));

  bundle = nlohmann::json::parse(ReadFixture("bundle-certificate.json"));
  bundle["verificationMaterial"]["x509CertificateChain"]["certificates"][1]["rawBytes"] = "%%%%";
  EXPECT_THAT(BundleRefusal(bundle), HasSubstr("certificates[1].rawBytes is not valid base64"));

  bundle = KeyBundle();
  bundle["verificationMaterial"]["publicKey"]["hint"] = "not-a-sha256";
  EXPECT_THAT(BundleRefusal(bundle), HasSubstr("publicKey.hint: must be 64 hex digits"));
}

TEST(SigstoreBundleTest, BoundsTheTextAndTheCertificates) {
  // A payload whose base64 alone is past the bound: refused before anything is decoded.
  nlohmann::json bundle = KeyBundle();
  bundle["dsseEnvelope"]["payload"] = std::string(api::kMaxSignatureBundleLength, 'A');
  EXPECT_THAT(BundleRefusal(bundle), HasSubstr("exceeds the limit of 393216 bytes"));

  bundle = nlohmann::json::parse(ReadFixture("bundle-certificate.json"));
  nlohmann::json& certificates =
      bundle["verificationMaterial"]["x509CertificateChain"]["certificates"];
  while (certificates.size() <= kMaxBundleCertificates) certificates.push_back(certificates[0]);
  EXPECT_THAT(BundleRefusal(bundle), HasSubstr("holds 9 certificates, more than the 8 allowed"));
  certificates = nlohmann::json::array();
  EXPECT_THAT(BundleRefusal(bundle), HasSubstr("must be a non-empty array"));

  // Deep nesting stops the parse (tlogEntries are not read, but they are parsed).
  bundle = KeyBundle();
  nlohmann::json deep = nlohmann::json::array();
  for (int i = 0; i < 40; ++i) deep = nlohmann::json::array({deep});
  bundle["verificationMaterial"]["tlogEntries"] = deep;
  EXPECT_THAT(BundleRefusal(bundle), HasSubstr("nesting deeper than 16 levels"));
}

TEST(SigstoreBundleTest, RefusesAmbiguousOrKeylessVerificationMaterial) {
  nlohmann::json bundle = nlohmann::json::parse(ReadFixture("bundle-certificate.json"));
  bundle["verificationMaterial"]["publicKey"] = {{"hint", std::string(64, 'a')}};
  EXPECT_THAT(BundleRefusal(bundle),
              HasSubstr("must hold publicKey or x509CertificateChain, not both"));

  bundle = KeyBundle();
  bundle["verificationMaterial"].erase("publicKey");
  bundle["verificationMaterial"]["certificate"] = {{"rawBytes", "MAA="}};
  EXPECT_THAT(BundleRefusal(bundle), HasSubstr("keyless Sigstore signatures are not supported"));
}

TEST(SigstoreBundleTest, PreAuthenticationEncodingIsDsseV1s) {
  // The example of the DSSE specification (protocol.md).
  EXPECT_EQ(DssePreAuthenticationEncoding("http://example.com/HelloWorld", "hello world"),
            "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
  EXPECT_EQ(DssePreAuthenticationEncoding("", ""), "DSSEv1 0  0 ");
  // Lengths in bytes, not characters.
  EXPECT_EQ(DssePreAuthenticationEncoding("t", "\xC3\xA9"), "DSSEv1 1 t 2 \xC3\xA9");
}

}  // namespace
}  // namespace modelplane::core
