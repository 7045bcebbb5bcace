#include "core/pki/peer_ticket.h"

#include <chrono>
#include <string>

#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509v3.h>

#include <gtest/gtest.h>

#include "core/digest/file_set_tree.h"
#include "core/pki/certificate_authority.h"
#include "core/pki/statement_signature.h"
#include "core/text/base64.h"

namespace modelplane::core {
namespace {

using namespace std::chrono_literals;
using std::chrono::system_clock;

CertificateAuthority MakeAuthority(const std::string& name) {
  auto authority = CertificateAuthority::Generate(name, system_clock::now() + 24h);
  EXPECT_TRUE(authority) << authority.error().ToString();
  return std::move(*authority);
}

StatementVerifier VerifierOf(const std::string& pem) {
  auto verifier = StatementVerifier::FromCertificatePem(pem);
  EXPECT_TRUE(verifier) << verifier.error().ToString();
  return std::move(*verifier);
}

// An administrator's own CA with an RSA key (the chart accepts any CA Secret).
CertificateAuthority MakeRsaAuthority() {
  pki_internal::KeyHandle key(EVP_RSA_gen(2048));
  pki_internal::CertificateHandle certificate(X509_new());
  X509* raw = certificate.get();
  X509_set_version(raw, X509_VERSION_3);
  ASN1_INTEGER_set(X509_get_serialNumber(raw), 7);
  X509_gmtime_adj(X509_getm_notBefore(raw), -3600);
  X509_gmtime_adj(X509_getm_notAfter(raw), 86400);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(raw), "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("rsa peer CA"), -1, -1, 0);
  X509_set_issuer_name(raw, X509_get_subject_name(raw));
  X509_set_pubkey(raw, key.get());
  X509V3_CTX context;
  X509V3_set_ctx(&context, raw, raw, nullptr, nullptr, 0);
  X509_EXTENSION* extension =
      X509V3_EXT_conf_nid(nullptr, &context, NID_basic_constraints, "critical,CA:TRUE");
  X509_add_ext(raw, extension, -1);
  X509_EXTENSION_free(extension);
  X509_sign(raw, key.get(), EVP_sha256());
  const std::string certificate_pem =
      pki_internal::WritePem([&](BIO* bio) { return PEM_write_bio_X509(bio, raw); });
  const std::string key_pem = pki_internal::WritePem([&](BIO* bio) {
    return PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
  auto authority = CertificateAuthority::FromPem(certificate_pem, key_pem);
  EXPECT_TRUE(authority) << authority.error().ToString();
  return std::move(*authority);
}

PeerTicket Ticket() {
  const std::array digests{Sha256Of("a"), Sha256Of("b"), Sha256Of("c")};
  return {.node = "gpu-node-7.zone-a",
          .files_root = FileSetTree::Of(digests).root(),
          .expires = std::chrono::floor<std::chrono::seconds>(system_clock::now() + 1h)};
}

TEST(PeerTicketTest, ATicketSignedByTheCaReadsBackWithItsCertificate) {
  for (const CertificateAuthority& authority : {MakeAuthority("ec peer CA"), MakeRsaAuthority()}) {
    auto text = SignPeerTicket(authority, Ticket());
    ASSERT_TRUE(text) << text.error().ToString();
    EXPECT_TRUE(text->starts_with("v1."));
    EXPECT_LT(text->size(), kMaxPeerTicketBytes);
    auto read = ReadPeerTicket(VerifierOf(authority.certificate_pem()), *text);
    ASSERT_TRUE(read) << read.error().ToString();
    EXPECT_EQ(*read, Ticket());
  }
}

TEST(PeerTicketTest, AnotherCasTicketIsRefusedButABundleWithBothAccepts) {
  const CertificateAuthority ours = MakeAuthority("ours");
  const CertificateAuthority theirs = MakeAuthority("theirs");
  const std::string text = *SignPeerTicket(theirs, Ticket());
  auto refused = ReadPeerTicket(VerifierOf(ours.certificate_pem()), text);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kUnauthenticated);
  EXPECT_NE(refused.error().message().find("does not verify"), std::string::npos);
  // A CA being rotated: agents trust both certificates for a while.
  EXPECT_TRUE(ReadPeerTicket(VerifierOf(ours.certificate_pem() + theirs.certificate_pem()), text));
}

TEST(PeerTicketTest, AnyChangeToTheStatementBreaksTheSignature) {
  const CertificateAuthority authority = MakeAuthority("peer CA");
  const StatementVerifier verifier = VerifierOf(authority.certificate_pem());
  const std::string text = *SignPeerTicket(authority, Ticket());
  const std::size_t first = text.find('.');
  const std::size_t second = text.find('.', first + 1);
  const std::string signature = text.substr(second + 1);
  const auto with_statement = [&](const std::string& statement) {
    return "v1." + EncodeBase64(statement) + "." + signature;
  };
  const std::string hex(64, 'a');
  for (const std::string& statement :
       {std::string("gpu-node-8.zone-a\n") + hex + "\n1",
        std::string("gpu-node-7.zone-a\n") + hex + "\n99999999999"}) {
    auto read = ReadPeerTicket(verifier, with_statement(statement));
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().code(), ErrorCode::kUnauthenticated);
  }
  // Another kind of statement signed by the same key is not a ticket.
  auto foreign = authority.SignStatement("another-statement-v1", "gpu-node-7.zone-a");
  ASSERT_TRUE(foreign);
  EXPECT_FALSE(ReadPeerTicket(
      verifier, "v1." + EncodeBase64("gpu-node-7.zone-a") + "." + EncodeBase64(*foreign)));
}

TEST(PeerTicketTest, MalformedTicketsAreRefusedWithAReason) {
  const CertificateAuthority authority = MakeAuthority("peer CA");
  const StatementVerifier verifier = VerifierOf(authority.certificate_pem());
  const std::string good = *SignPeerTicket(authority, Ticket());
  for (const std::string& text :
       {std::string(), std::string("v1"), std::string("v1.."), "v2" + good.substr(2),
        good.substr(0, good.size() - 4), good + "!", std::string(kMaxPeerTicketBytes + 1, 'v'),
        "v1.@@@@." + good.substr(good.rfind('.') + 1)}) {
    auto read = ReadPeerTicket(verifier, text);
    ASSERT_FALSE(read) << text;
    EXPECT_EQ(read.error().code(), ErrorCode::kUnauthenticated);
    EXPECT_TRUE(read.error().message().starts_with("peer ticket: "));
  }
}

TEST(PeerTicketTest, OnlyNodeNamesAreSigned) {
  const CertificateAuthority authority = MakeAuthority("peer CA");
  for (const std::string& node : {std::string(), std::string("Node-A"), std::string("a\nb"),
                                  std::string("-a"), std::string(254, 'a')}) {
    PeerTicket ticket = Ticket();
    ticket.node = node;
    EXPECT_FALSE(SignPeerTicket(authority, ticket)) << node;
  }
}

TEST(StatementVerifierTest, RefusesTextWithoutACertificate) {
  EXPECT_FALSE(StatementVerifier::FromCertificatePem(""));
  EXPECT_FALSE(StatementVerifier::FromCertificatePem("-----BEGIN CERTIFICATE-----\nxx\n"));
  EXPECT_FALSE(StatementVerifier::FromCertificateFile("/nonexistent/ca.crt"));
}

}  // namespace
}  // namespace modelplane::core
