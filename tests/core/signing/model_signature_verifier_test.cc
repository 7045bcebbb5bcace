#include "core/signing/model_signature_verifier.h"

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/core/signing/signing_fixtures.h"

namespace modelplane::core {
namespace {

using signing_test::ReadFixture;
using signing_test::SpecWith;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr std::string_view kEmail = "release@modelplane.test";
constexpr std::string_view kUri = "spiffe://modelplane.test/release";

SignerRule KeyRule(std::string name, std::string_view fixture,
                   std::vector<std::string> namespaces = {}) {
  return {.name = std::move(name),
          .public_key = ReadFixture(fixture),
          .namespaces = std::move(namespaces)};
}

SignerRule CertificateRule(std::string name, std::string_view fixture,
                           std::vector<std::string> identities,
                           std::vector<std::string> namespaces = {}) {
  return {.name = std::move(name),
          .certificate_authorities = ReadFixture(fixture),
          .identities = std::move(identities),
          .namespaces = std::move(namespaces)};
}

SignaturePolicy Policy() {
  return {.required = {"team-a"},
          .signers = {KeyRule("release-p256", "key-p256.pub.pem"),
                      KeyRule("release-p384", "key-p384.pub.pem", {"team-a", "team-b"}),
                      CertificateRule("corp-release", "ca-root.cert.pem",
                                      {"someone@else.test", std::string(kEmail)})}};
}

std::expected<std::vector<api::SignedBy>, SignatureRefusal> Verify(
    const SignaturePolicy* policy, const api::ModelRevisionSpec& spec,
    std::string_view namespace_name = "team-a") {
  return VerifyModelSignatures(policy, namespace_name, spec, signing_test::VerificationTime());
}

// The refusal of the one bundle `bundle` under `policy`; fails the test when it verifies.
SignatureRefusal RefusalOf(const SignaturePolicy& policy, std::string bundle,
                           std::string_view namespace_name = "team-a") {
  auto verified = Verify(&policy, SpecWith({std::move(bundle)}), namespace_name);
  EXPECT_FALSE(verified) << "verified by " << (verified ? verified->at(0).signer : "");
  if (verified) return {};
  EXPECT_THAT(verified.error().message, StartsWith("spec.signatures[0]: "));
  return verified.error();
}

MATCHER_P2(IsRefusal, reason, message, "") {
  return ::testing::ExplainMatchResult(reason, arg.reason, result_listener) &&
         ::testing::ExplainMatchResult(message, arg.message, result_listener);
}

TEST(ModelSignatureVerifierTest, AcceptsKeySignaturesOnP256AndP384) {
  const SignaturePolicy policy = Policy();
  auto p256 = Verify(&policy, SpecWith({ReadFixture("bundle-key-p256.json")}));
  ASSERT_TRUE(p256) << p256.error().message;
  EXPECT_THAT(*p256, ElementsAre(api::SignedBy{.signer = "release-p256",
                                               .public_key = signing_test::Fingerprint("key-p256"),
                                               .identity = ""}));
  auto p384 = Verify(&policy, SpecWith({ReadFixture("bundle-key-p384.json")}));
  ASSERT_TRUE(p384) << p384.error().message;
  EXPECT_THAT(*p384, ElementsAre(api::SignedBy{.signer = "release-p384",
                                               .public_key = signing_test::Fingerprint("key-p384"),
                                               .identity = ""}));
}

TEST(ModelSignatureVerifierTest, AcceptsACertificateSignatureWithItsIdentity) {
  SignaturePolicy policy = Policy();
  auto verified = Verify(&policy, SpecWith({ReadFixture("bundle-certificate.json")}));
  ASSERT_TRUE(verified) << verified.error().message;
  EXPECT_THAT(*verified, ElementsAre(api::SignedBy{.signer = "corp-release",
                                                   .public_key = signing_test::Fingerprint("leaf"),
                                                   .identity = std::string(kEmail)}));
  // The identity is the subjectAltName the rule lists, whichever kind it is.
  policy.signers[2].identities = {std::string(kUri)};
  verified = Verify(&policy, SpecWith({ReadFixture("bundle-certificate.json")}));
  ASSERT_TRUE(verified) << verified.error().message;
  EXPECT_EQ(verified->at(0).identity, kUri);
}

TEST(ModelSignatureVerifierTest, RefusesAKeyNoSignerHolds) {
  const SignatureRefusal refusal = RefusalOf(Policy(), ReadFixture("bundle-key-untrusted.json"));
  const std::string hint = nlohmann::json::parse(
      ReadFixture("bundle-key-untrusted.json"))["verificationMaterial"]["publicKey"]["hint"];
  EXPECT_THAT(refusal, IsRefusal(kReasonSignatureUntrusted,
                                 AllOf(HasSubstr("the key with hint " + hint),
                                       HasSubstr("no publicKey of a signer serving namespace "
                                                 "\"team-a\""))));
}

TEST(ModelSignatureVerifierTest, TriesEveryKeyForABundleWithoutAHint) {
  const SignaturePolicy policy = Policy();
  for (const std::string name : {"key-p256", "key-p384"}) {
    nlohmann::json bundle = nlohmann::json::parse(ReadFixture("bundle-" + name + ".json"));
    bundle["verificationMaterial"]["publicKey"].erase("hint");
    auto verified = Verify(&policy, SpecWith({bundle.dump()}));
    ASSERT_TRUE(verified) << verified.error().message;
    EXPECT_EQ(verified->at(0).public_key, signing_test::Fingerprint(name));
  }
  nlohmann::json bundle = nlohmann::json::parse(ReadFixture("bundle-key-untrusted.json"));
  bundle["verificationMaterial"].erase("publicKey");
  EXPECT_THAT(RefusalOf(policy, bundle.dump()),
              IsRefusal(kReasonSignatureUntrusted, HasSubstr("signed with a key, which is no "
                                                             "publicKey of a signer")));
}

TEST(ModelSignatureVerifierTest, RefusesATamperedStatement) {
  // The statement edited after signing (a file's digest replaced): the hint still names the
  // key, whose signature no longer verifies.
  for (const std::string fixture : {"bundle-key-p256.json", "bundle-certificate.json"}) {
    SCOPED_TRACE(fixture);
    const std::string bundle = ReadFixture(fixture);
    std::string payload = signing_test::PayloadOf(bundle);
    const std::string original = signing_test::SignedFiles()[0].sha256.substr(7);
    const std::string forged(64, 'f');
    payload.replace(payload.find(original), original.size(), forged);
    api::ModelRevisionSpec spec = SpecWith({signing_test::WithPayload(bundle, payload)});
    spec.files[0].sha256 = "sha256:" + forged;
    const SignaturePolicy policy = Policy();
    auto verified = Verify(&policy, spec);
    ASSERT_FALSE(verified);
    EXPECT_THAT(verified.error(),
                IsRefusal(kReasonSignatureInvalid,
                          AllOf(StartsWith("spec.signatures[0]: the signature does not verify"),
                                HasSubstr("altered after signing"))));
  }
}

TEST(ModelSignatureVerifierTest, RefusesSignedFilesThatAreNotSpecFiles) {
  const SignaturePolicy policy = Policy();
  const std::string bundle = ReadFixture("bundle-key-p256.json");
  api::ModelRevisionSpec spec = SpecWith({bundle});
  spec.files[1].sha256 = "sha256:" + std::string(64, '0');
  spec.files.erase(spec.files.begin() + 2);
  spec.files.push_back(
      {.path = "extra.bin", .size = 1, .sha256 = "sha256:" + std::string(64, '1')});
  auto verified = Verify(&policy, spec);
  ASSERT_FALSE(verified);
  EXPECT_THAT(verified.error(),
              IsRefusal(kReasonSignatureFilesMismatch,
                        AllOf(HasSubstr("the signed statement (3 files) and spec.files (3 files) "
                                        "differ"),
                              HasSubstr("\"tokenizer.json\" has sha256:000"),
                              HasSubstr("\"extra.bin\" is in spec.files but not signed"),
                              HasSubstr("\"weights/model.safetensors\" is signed but not in "
                                        "spec.files"))));
  // A file fewer is a mismatch too: the signature covers the whole model, no more, no less.
  spec = SpecWith({bundle});
  spec.files.pop_back();
  EXPECT_EQ(Verify(&policy, spec).error().reason, kReasonSignatureFilesMismatch);
  // Upper-case hex in spec.files is the same digest.
  spec = SpecWith({bundle});
  for (char& c : spec.files[0].sha256) c = static_cast<char>(std::toupper(c));
  spec.files[0].sha256.replace(0, 7, "sha256:");
  EXPECT_TRUE(Verify(&policy, spec));
}

TEST(ModelSignatureVerifierTest, ListsAFewDifferencesOnly) {
  const SignaturePolicy policy = Policy();
  api::ModelRevisionSpec spec = SpecWith({ReadFixture("bundle-key-p256.json")});
  for (int i = 0; i < 10; ++i) {
    spec.files.push_back(
        {.path = fmt::format("extra-{}", i), .sha256 = "sha256:" + std::string(64, 'a')});
  }
  auto verified = Verify(&policy, spec);
  ASSERT_FALSE(verified);
  EXPECT_THAT(verified.error().message, HasSubstr("\"extra-4\" is in spec.files but not signed; "
                                                  "and 5 more"));
  EXPECT_THAT(verified.error().message, ::testing::Not(HasSubstr("extra-5")));
}

TEST(ModelSignatureVerifierTest, RefusesAnExpiredCertificate) {
  EXPECT_THAT(RefusalOf(Policy(), ReadFixture("bundle-certificate-expired.json")),
              IsRefusal(kReasonSignatureCertificateExpired,
                        AllOf(HasSubstr("signer \"corp-release\" is not valid at "
                                        "2026-06-01T00:00:00Z"),
                              HasSubstr("certificate has expired"))));
  // A certificate not yet valid when the revision was created is refused the same way.
  const SignaturePolicy policy = Policy();
  auto early =
      VerifyModelSignatures(&policy, "team-a", SpecWith({ReadFixture("bundle-certificate.json")}),
                            std::chrono::sys_days{std::chrono::year{2024} / std::chrono::June / 1});
  ASSERT_FALSE(early);
  EXPECT_EQ(early.error().reason, kReasonSignatureCertificateExpired);
  EXPECT_THAT(early.error().message, HasSubstr("certificate is not yet valid"));
}

TEST(ModelSignatureVerifierTest, RefusesACertificateForAnIdentityNotListed) {
  SignaturePolicy policy = Policy();
  policy.signers[2].identities = {"other@modelplane.test", "modelplane.test"};
  EXPECT_THAT(
      RefusalOf(policy, ReadFixture("bundle-certificate.json")),
      IsRefusal(kReasonSignatureUntrusted,
                HasSubstr("the signing certificate's identities (\"release@modelplane.test\", "
                          "\"spiffe://modelplane.test/release\") are not among signer "
                          "\"corp-release\"'s identities")));
  // Exact match only: no prefixes, no case folding.
  policy.signers[2].identities = {"RELEASE@modelplane.test", "spiffe://modelplane.test"};
  EXPECT_EQ(RefusalOf(policy, ReadFixture("bundle-certificate.json")).reason,
            kReasonSignatureUntrusted);
}

TEST(ModelSignatureVerifierTest, RefusesACertificateOfAnotherAuthority) {
  EXPECT_THAT(RefusalOf(Policy(), ReadFixture("bundle-certificate-other-ca.json")),
              IsRefusal(kReasonSignatureUntrusted,
                        HasSubstr("the signing certificate leads to no certificateAuthorities of "
                                  "a signer serving namespace \"team-a\"")));
  // A policy with key signers only trusts no certificate at all.
  SignaturePolicy keys_only = Policy();
  keys_only.signers.pop_back();
  EXPECT_EQ(RefusalOf(keys_only, ReadFixture("bundle-certificate.json")).reason,
            kReasonSignatureUntrusted);
}

TEST(ModelSignatureVerifierTest, RefusesACertificateNotForSigning) {
  EXPECT_THAT(RefusalOf(Policy(), ReadFixture("bundle-certificate-no-signing.json")),
              IsRefusal(kReasonSignatureUntrusted,
                        HasSubstr("neither keyUsage digitalSignature nor extendedKeyUsage "
                                  "codeSigning")));
}

TEST(ModelSignatureVerifierTest, RefusesASignerThatDoesNotServeTheNamespace) {
  // release-p384 serves team-a and team-b only.
  EXPECT_THAT(RefusalOf(Policy(), ReadFixture("bundle-key-p384.json"), "team-c"),
              IsRefusal(kReasonSignatureUntrusted,
                        HasSubstr("signed by signer \"release-p384\", which does not serve "
                                  "namespace \"team-c\"")));
  SignaturePolicy policy = Policy();
  policy.signers[2].namespaces = {"team-b"};
  EXPECT_THAT(RefusalOf(policy, ReadFixture("bundle-certificate.json")),
              IsRefusal(kReasonSignatureUntrusted,
                        HasSubstr("signer \"corp-release\"'s authorities, and the signer does not "
                                  "serve namespace \"team-a\"")));
  // Another rule with the same key that does serve it vouches.
  policy.signers.push_back(KeyRule("p384-for-c", "key-p384.pub.pem", {"team-c"}));
  auto verified = Verify(&policy, SpecWith({ReadFixture("bundle-key-p384.json")}), "team-c");
  ASSERT_TRUE(verified) << verified.error().message;
  EXPECT_EQ(verified->at(0).signer, "p384-for-c");
}

TEST(ModelSignatureVerifierTest, RequiredNamespacesNeedASignature) {
  const SignaturePolicy policy = Policy();
  auto unsigned_revision = Verify(&policy, SpecWith({}));
  ASSERT_FALSE(unsigned_revision);
  EXPECT_THAT(unsigned_revision.error(),
              IsRefusal(kReasonSignatureRequired,
                        HasSubstr("namespace \"team-a\" requires signed revisions")));
  auto elsewhere = Verify(&policy, SpecWith({}), "team-b");
  ASSERT_TRUE(elsewhere) << elsewhere.error().message;
  EXPECT_TRUE(elsewhere->empty());
  // Without a policy nothing is required, and nothing is trusted.
  auto no_policy = Verify(nullptr, SpecWith({}));
  ASSERT_TRUE(no_policy);
  EXPECT_TRUE(no_policy->empty());
  auto signed_without_policy = Verify(nullptr, SpecWith({ReadFixture("bundle-key-p256.json")}));
  ASSERT_FALSE(signed_without_policy);
  EXPECT_THAT(signed_without_policy.error(),
              IsRefusal(kReasonSignatureUntrusted, HasSubstr("no signature policy is configured")));
}

TEST(ModelSignatureVerifierTest, EverySignatureMustVerify) {
  const SignaturePolicy policy = Policy();
  auto both = Verify(&policy, SpecWith({ReadFixture("bundle-certificate.json"),
                                        ReadFixture("bundle-key-p256.json")}));
  ASSERT_TRUE(both) << both.error().message;
  ASSERT_EQ(both->size(), 2U);
  EXPECT_EQ(both->at(0).signer, "corp-release");
  EXPECT_EQ(both->at(1).signer, "release-p256");

  auto one_bad = Verify(&policy, SpecWith({ReadFixture("bundle-key-p256.json"),
                                           ReadFixture("bundle-key-untrusted.json")}));
  ASSERT_FALSE(one_bad);
  EXPECT_EQ(one_bad.error().reason, kReasonSignatureUntrusted);
  EXPECT_THAT(one_bad.error().message, StartsWith("spec.signatures[1]: "));

  auto three = Verify(
      &policy, SpecWith({ReadFixture("bundle-key-p256.json"), ReadFixture("bundle-key-p256.json"),
                         ReadFixture("bundle-key-p256.json")}));
  ASSERT_FALSE(three);
  EXPECT_THAT(three.error(), IsRefusal(kReasonSignatureMalformed,
                                       HasSubstr("3 signatures, more than the 2 allowed")));
}

TEST(ModelSignatureVerifierTest, RefusesMalformedBundlesAndStatements) {
  const SignaturePolicy policy = Policy();
  EXPECT_THAT(RefusalOf(policy, "{"),
              IsRefusal(kReasonSignatureMalformed, StartsWith("spec.signatures[0]: bundle: ")));

  // Statements the real tool would not write, validly signed with a trusted key: refused as
  // malformed once the signature verifies.
  const std::string payload = signing_test::PayloadOf(ReadFixture("bundle-key-p256.json"));
  nlohmann::json statement = nlohmann::json::parse(payload);
  statement["predicate"]["serialization"]["method"] = "shards";
  EXPECT_THAT(
      RefusalOf(policy, signing_test::SignedBundle("key-p256.key.pem", statement.dump())),
      IsRefusal(kReasonSignatureMalformed,
                AllOf(StartsWith("spec.signatures[0]: statement: "), HasSubstr("\"shards\""))));
  statement = nlohmann::json::parse(payload);
  statement["subject"][0]["digest"]["sha256"] = std::string(64, '0');
  EXPECT_THAT(RefusalOf(policy, signing_test::SignedBundle("key-p256.key.pem", statement.dump())),
              IsRefusal(kReasonSignatureMalformed,
                        HasSubstr("is not the digest of the resources' digests")));
  EXPECT_THAT(RefusalOf(policy, signing_test::SignedBundle("key-p256.key.pem", "not json")),
              IsRefusal(kReasonSignatureMalformed, HasSubstr("statement: ")));
  EXPECT_THAT(
      RefusalOf(policy, signing_test::SignedBundle("key-p256.key.pem", payload, "text/plain")),
      IsRefusal(kReasonSignatureMalformed, HasSubstr("the signed payload's type is "
                                                     "\"text/plain\"")));
  // The same statement signed here as the tool signs it verifies: the helper is faithful.
  auto resigned =
      Verify(&policy, SpecWith({signing_test::SignedBundle("key-p256.key.pem", payload)}));
  ASSERT_TRUE(resigned) << resigned.error().message;

  // A bundle whose certificate bytes are not a certificate.
  nlohmann::json bundle = nlohmann::json::parse(ReadFixture("bundle-certificate.json"));
  bundle["verificationMaterial"]["x509CertificateChain"]["certificates"][0]["rawBytes"] = "MAA=";
  EXPECT_THAT(RefusalOf(policy, bundle.dump()),
              IsRefusal(kReasonSignatureMalformed, HasSubstr("certificates[0]: ")));
}

TEST(ModelSignatureVerifierTest, SurvivesGarbage) {
  const SignaturePolicy policy = Policy();
  const std::string bundle = ReadFixture("bundle-certificate.json");
  // Every truncation of a real bundle is refused, none crashes.
  for (std::size_t length = 0; length < bundle.size(); length += 97) {
    EXPECT_FALSE(Verify(&policy, SpecWith({bundle.substr(0, length)})));
  }
  // A certificate chain that repeats the leaf: no loop, no trust.
  nlohmann::json looped = nlohmann::json::parse(bundle);
  nlohmann::json& certificates =
      looped["verificationMaterial"]["x509CertificateChain"]["certificates"];
  certificates = {certificates[0], certificates[0], certificates[0]};
  EXPECT_EQ(RefusalOf(policy, looped.dump()).reason, kReasonSignatureUntrusted);
}

}  // namespace
}  // namespace modelplane::core
