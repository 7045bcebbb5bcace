#include "core/signing/signing_certificates.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/signing/sigstore_bundle.h"
#include "tests/core/signing/signing_fixtures.h"

namespace modelplane::core {
namespace {

using pki_internal::CertificateHandle;
using signing_internal::ChainOutcome;
using signing_test::ReadFixture;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Chain {
  CertificateHandle leaf;
  std::vector<CertificateHandle> intermediates;
};

Chain ChainOf(std::string_view bundle_fixture) {
  auto bundle = ParseSigstoreBundle(ReadFixture(bundle_fixture));
  EXPECT_TRUE(bundle);
  Chain chain;
  for (std::size_t i = 0; i < bundle->certificates.size(); ++i) {
    auto certificate = signing_internal::ReadDerCertificate(bundle->certificates[i]);
    EXPECT_TRUE(certificate) << certificate.error().ToString();
    if (i == 0) {
      chain.leaf = std::move(*certificate);
    } else {
      chain.intermediates.push_back(std::move(*certificate));
    }
  }
  return chain;
}

std::vector<CertificateHandle> Authorities(std::string_view fixture) {
  auto authorities = signing_internal::ReadCertificateAuthorities(ReadFixture(fixture));
  EXPECT_TRUE(authorities) << authorities.error().ToString();
  return std::move(*authorities);
}

ChainOutcome Outcome(const Chain& chain, std::string_view authorities,
                     std::chrono::system_clock::time_point at = signing_test::VerificationTime()) {
  return signing_internal::VerifyCertificateChain(chain.leaf.get(), chain.intermediates,
                                                  Authorities(authorities), at)
      .outcome;
}

TEST(SigningCertificatesTest, TrustsAChainToTheConfiguredRootAtTheGivenTime) {
  const Chain chain = ChainOf("bundle-certificate.json");
  ASSERT_EQ(chain.intermediates.size(), 2U);
  EXPECT_EQ(Outcome(chain, "ca-root.cert.pem"), ChainOutcome::kTrusted);
  // Before the leaf's notBefore (2025-01-01) and after its notAfter (2045-01-01).
  using namespace std::chrono;
  EXPECT_EQ(Outcome(chain, "ca-root.cert.pem", sys_days{year{2024} / June / 1}),
            ChainOutcome::kExpired);
  EXPECT_EQ(Outcome(chain, "ca-root.cert.pem", sys_days{year{2046} / June / 1}),
            ChainOutcome::kExpired);
  EXPECT_EQ(Outcome(ChainOf("bundle-certificate-expired.json"), "ca-root.cert.pem"),
            ChainOutcome::kExpired);
}

TEST(SigningCertificatesTest, TrustsNothingButTheConfiguredAuthorities) {
  const Chain chain = ChainOf("bundle-certificate.json");
  EXPECT_EQ(Outcome(chain, "other-ca-root.cert.pem"), ChainOutcome::kUntrusted);
  // The bundle's own root is only an untrusted helper.
  EXPECT_EQ(Outcome(ChainOf("bundle-certificate-other-ca.json"), "ca-root.cert.pem"),
            ChainOutcome::kUntrusted);
  // Without the intermediate the chain does not reach the root.
  Chain leaf_only{.leaf = std::move(ChainOf("bundle-certificate.json").leaf), .intermediates = {}};
  const auto verdict = signing_internal::VerifyCertificateChain(
      leaf_only.leaf.get(), {}, Authorities("ca-root.cert.pem"), signing_test::VerificationTime());
  EXPECT_EQ(verdict.outcome, ChainOutcome::kUntrusted);
  EXPECT_THAT(verdict.detail, HasSubstr("unable to get local issuer certificate"));
  // An expired leaf of an untrusted issuer is untrusted first.
  EXPECT_EQ(Outcome(ChainOf("bundle-certificate-expired.json"), "other-ca-root.cert.pem"),
            ChainOutcome::kUntrusted);
}

TEST(SigningCertificatesTest, ReadsUsageAndIdentitiesOfTheLeaf) {
  const Chain chain = ChainOf("bundle-certificate.json");
  EXPECT_TRUE(signing_internal::MaySign(chain.leaf.get()));
  EXPECT_THAT(signing_internal::SignerIdentities(chain.leaf.get()),
              ElementsAre("release@modelplane.test", "spiffe://modelplane.test/release"));
  EXPECT_FALSE(signing_internal::MaySign(ChainOf("bundle-certificate-no-signing.json").leaf.get()));
  // A CA certificate names no signer.
  EXPECT_TRUE(signing_internal::SignerIdentities(chain.intermediates[0].get()).empty());
  EXPECT_FALSE(signing_internal::MaySign(chain.intermediates[0].get()));
}

TEST(SigningCertificatesTest, RefusesMalformedCertificates) {
  EXPECT_FALSE(signing_internal::ReadDerCertificate(""));
  EXPECT_FALSE(signing_internal::ReadDerCertificate("\x30\x03\x02\x01\x01"));
  auto bundle = ParseSigstoreBundle(ReadFixture("bundle-certificate.json"));
  ASSERT_TRUE(bundle);
  EXPECT_TRUE(signing_internal::ReadDerCertificate(bundle->certificates[0]));
  EXPECT_THAT(signing_internal::ReadDerCertificate(bundle->certificates[0] + "x").error().message(),
              HasSubstr("followed by other bytes"));
  EXPECT_FALSE(signing_internal::ReadDerCertificate(
      std::string_view(bundle->certificates[0]).substr(0, 100)));
  EXPECT_THAT(signing_internal::ReadCertificateAuthorities("garbage").error().message(),
              HasSubstr("holds no PEM certificate"));
  EXPECT_EQ(Authorities("chain.cert.pem").size(), 2U);
}

}  // namespace
}  // namespace modelplane::core
