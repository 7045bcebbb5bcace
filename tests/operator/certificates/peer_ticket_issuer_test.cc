#include "operator/certificates/peer_ticket_issuer.h"

#include <chrono>

#include <gtest/gtest.h>

#include "core/pki/peer_ticket.h"

namespace modelplane::controller {
namespace {

using namespace std::chrono_literals;
using std::chrono::system_clock;

class PeerTicketIssuerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto authority = core::CertificateAuthority::Generate("peer CA", system_clock::now() + 24h);
    ASSERT_TRUE(authority) << authority.error().ToString();
    auto verifier = core::StatementVerifier::FromCertificatePem(authority->certificate_pem());
    ASSERT_TRUE(verifier);
    verifier_.emplace(std::move(*verifier));
    auto issuer = PeerTicketIssuer::Create(std::move(*authority));
    ASSERT_TRUE(issuer) << issuer.error().ToString();
    issuer_ = std::move(*issuer);
  }

  core::PeerTicket Read(const std::string& text) const {
    auto ticket = core::ReadPeerTicket(*verifier_, text);
    EXPECT_TRUE(ticket) << ticket.error().ToString();
    return ticket.value_or(core::PeerTicket{});
  }

  std::optional<core::StatementVerifier> verifier_;
  std::unique_ptr<PeerTicketIssuer> issuer_;
  const core::Sha256Bytes root_ = core::Sha256Of("root");
  const system_clock::time_point now_ =
      std::chrono::floor<std::chrono::seconds>(system_clock::now());
};

TEST_F(PeerTicketIssuerTest, ANewTicketNamesTheNodeAndFilesForAnHour) {
  auto ticket = issuer_->TicketFor("node-a", root_, "", now_);
  ASSERT_TRUE(ticket) << ticket.error().ToString();
  const core::PeerTicket read = Read(*ticket);
  EXPECT_EQ(read.node, "node-a");
  EXPECT_EQ(read.files_root, root_);
  EXPECT_EQ(read.expires, now_ + kPeerTicketLifetime);
}

TEST_F(PeerTicketIssuerTest, ATicketIsKeptWhileMoreThanHalfItsLifeIsLeft) {
  const std::string first = *issuer_->TicketFor("node-a", root_, "", now_);
  EXPECT_EQ(*issuer_->TicketFor("node-a", root_, first, now_ + 29min), first);
  const std::string renewed = *issuer_->TicketFor("node-a", root_, first, now_ + 31min);
  EXPECT_NE(renewed, first);
  EXPECT_EQ(Read(renewed).expires, now_ + 31min + kPeerTicketLifetime);
}

TEST_F(PeerTicketIssuerTest, ATicketForAnotherNodeFilesOrCaIsReplaced) {
  const std::string first = *issuer_->TicketFor("node-a", root_, "", now_);
  EXPECT_EQ(Read(*issuer_->TicketFor("node-b", root_, first, now_)).node, "node-b");
  const core::Sha256Bytes other = core::Sha256Of("other files");
  EXPECT_EQ(Read(*issuer_->TicketFor("node-a", other, first, now_)).files_root, other);
  // Written by someone else into the entry (or by a CA since replaced): not this issuer's.
  auto foreign_authority = core::CertificateAuthority::Generate("other", system_clock::now() + 24h);
  ASSERT_TRUE(foreign_authority);
  const std::string foreign = *core::SignPeerTicket(
      *foreign_authority, {.node = "node-a", .files_root = root_, .expires = now_ + 1h});
  EXPECT_NE(*issuer_->TicketFor("node-a", root_, foreign, now_), foreign);
  EXPECT_NE(*issuer_->TicketFor("node-a", root_, "v1.garbage", now_), "v1.garbage");
}

TEST_F(PeerTicketIssuerTest, LoadRefusesMissingOrMismatchedFiles) {
  EXPECT_FALSE(PeerTicketIssuer::Load("/nonexistent/tls.crt", "/nonexistent/tls.key"));
}

}  // namespace
}  // namespace modelplane::controller
