#include "core/pki/certificate_authority.h"

#include <chrono>

#include <gtest/gtest.h>

#include "core/pki/certificate_info.h"
#include "core/pki/certificate_request.h"
#include "core/pki/private_key.h"

namespace modelplane::core {
namespace {

using namespace std::chrono_literals;
using std::chrono::system_clock;

CertificateAuthority MakeAuthority() {
  auto authority = CertificateAuthority::Generate("test peer CA", system_clock::now() + 24h);
  EXPECT_TRUE(authority) << authority.error().ToString();
  return std::move(*authority);
}

TEST(CertificateRequestTest, CarriesTheNamesAndKeyOfItsMaker) {
  auto key = PrivateKey::Generate();
  ASSERT_TRUE(key) << key.error().ToString();
  auto pem = MakeCertificateRequestPem(*key, {.common_name = "modelplane-peer",
                                              .dns_names = {"node-a.peer.modelplane.invalid"},
                                              .ip_addresses = {"10.0.0.7", "fd00::7"}});
  ASSERT_TRUE(pem) << pem.error().ToString();
  auto request = CertificateRequest::Parse(*pem);
  ASSERT_TRUE(request) << request.error().ToString();
  EXPECT_EQ(request->names().common_name, "modelplane-peer");
  EXPECT_EQ(request->names().dns_names, std::vector<std::string>{"node-a.peer.modelplane.invalid"});
  EXPECT_EQ(request->names().ip_addresses, (std::vector<std::string>{"10.0.0.7", "fd00::7"}));
  EXPECT_EQ(request->public_key_fingerprint(), key->fingerprint());
}

TEST(CertificateRequestTest, RefusesGarbageOversizedAndTamperedRequests) {
  EXPECT_FALSE(CertificateRequest::Parse(""));
  EXPECT_FALSE(
      CertificateRequest::Parse("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n"
                                "-----END CERTIFICATE REQUEST-----\n"));
  EXPECT_FALSE(CertificateRequest::Parse(std::string(17 * 1024, 'A')));
  auto key = PrivateKey::Generate();
  ASSERT_TRUE(key);
  auto pem = MakeCertificateRequestPem(*key, {.dns_names = {"a.example"}});
  ASSERT_TRUE(pem);
  // Flip one character of the base64 body: the signature no longer verifies (or it no longer
  // parses); either way it is refused.
  std::string tampered = *pem;
  const std::size_t middle = tampered.find('\n') + 40;
  tampered[middle] = tampered[middle] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(CertificateRequest::Parse(tampered));
  EXPECT_FALSE(MakeCertificateRequestPem(*key, {.ip_addresses = {"10.0.0.300"}}));
  EXPECT_FALSE(MakeCertificateRequestPem(*key, {.common_name = std::string(65, 'x')}));
}

TEST(CertificateAuthorityTest, IssuesWhatTheSignerDecidedNotWhatTheRequestAsked) {
  const CertificateAuthority authority = MakeAuthority();
  auto key = PrivateKey::Generate();
  ASSERT_TRUE(key);
  auto pem = MakeCertificateRequestPem(*key, {.common_name = "admin",
                                              .dns_names = {"kubernetes.default.svc"},
                                              .ip_addresses = {"10.96.0.1"}});
  ASSERT_TRUE(pem);
  auto request = CertificateRequest::Parse(*pem);
  ASSERT_TRUE(request);
  const auto now = system_clock::now();
  auto certificate =
      authority.Issue(*request, {.names = {.common_name = "modelplane-peer",
                                           .dns_names = {"node-a.peer.modelplane.invalid"},
                                           .ip_addresses = {"10.0.0.7"}},
                                 .not_before = now - 5min,
                                 .not_after = now + 1h});
  ASSERT_TRUE(certificate) << certificate.error().ToString();
  auto info = ReadCertificateInfo(*certificate);
  ASSERT_TRUE(info) << info.error().ToString();
  EXPECT_EQ(info->names.common_name, "modelplane-peer");
  EXPECT_EQ(info->names.dns_names, std::vector<std::string>{"node-a.peer.modelplane.invalid"});
  EXPECT_EQ(info->names.ip_addresses, std::vector<std::string>{"10.0.0.7"});
  EXPECT_EQ(info->public_key_fingerprint, key->fingerprint());
  EXPECT_LE(info->not_after, now + 1h);
  EXPECT_GT(info->not_after, now + 59min);
}

TEST(CertificateAuthorityTest, NeverIssuesPastItsOwnExpiry) {
  auto authority = CertificateAuthority::Generate("short CA", system_clock::now() + 2h);
  ASSERT_TRUE(authority);
  auto key = PrivateKey::Generate();
  auto request = CertificateRequest::Parse(*MakeCertificateRequestPem(*key, {}));
  ASSERT_TRUE(request);
  const auto now = system_clock::now();
  auto certificate = authority->Issue(*request, {.not_before = now, .not_after = now + 24h * 30});
  ASSERT_TRUE(certificate);
  EXPECT_LE(ReadCertificateInfo(*certificate)->not_after, authority->not_after());
  EXPECT_FALSE(authority->Issue(*request, {.not_before = now + 3h, .not_after = now + 4h}));
}

TEST(CertificateAuthorityTest, LoadsFromPemAndRefusesAMismatchedKeyOrALeaf) {
  const CertificateAuthority authority = MakeAuthority();
  auto loaded =
      CertificateAuthority::FromPem(authority.certificate_pem(), authority.private_key_pem());
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  auto other_key = PrivateKey::Generate();
  ASSERT_TRUE(other_key);
  EXPECT_FALSE(CertificateAuthority::FromPem(authority.certificate_pem(), other_key->ToPem()));
  // A leaf the CA issued is not a CA itself.
  auto request = CertificateRequest::Parse(*MakeCertificateRequestPem(*other_key, {}));
  const auto now = system_clock::now();
  auto leaf = authority.Issue(*request, {.not_before = now, .not_after = now + 1h});
  ASSERT_TRUE(leaf);
  auto as_authority = CertificateAuthority::FromPem(*leaf, other_key->ToPem());
  ASSERT_FALSE(as_authority);
  EXPECT_NE(as_authority.error().message().find("not a CA"), std::string::npos);
}

TEST(PrivateKeyTest, RoundTripsThroughPemWithItsFingerprint) {
  auto key = PrivateKey::Generate();
  ASSERT_TRUE(key);
  auto again = PrivateKey::FromPem(key->ToPem());
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again->fingerprint(), key->fingerprint());
  EXPECT_EQ(key->fingerprint().rfind("sha256:", 0), 0U);
  EXPECT_FALSE(PrivateKey::FromPem("not a key"));
}

}  // namespace
}  // namespace modelplane::core
