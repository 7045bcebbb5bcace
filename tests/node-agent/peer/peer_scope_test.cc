// Peer scope: a peer serves a node only the blobs of revisions the operator asked it to stage.
// PeerScope's rules on their own, then a real PeerServer over mutual TLS read by the real
// PeerRangeSource with per-node certificates and tickets signed by the same test CA, the way the
// operator and agents do it.
#include "node-agent/peer/peer_scope.h"

#include <chrono>
#include <fstream>
#include <vector>

#include <gtest/gtest.h>

#include "core/api/peer_identity.h"
#include "core/digest/file_set_tree.h"
#include "core/http/http_client.h"
#include "core/pki/peer_ticket.h"
#include "node-agent/peer/peer_protocol.h"
#include "node-agent/peer/peer_range_source.h"
#include "node-agent/peer/peer_server.h"
#include "tests/core/http/test_certificates.h"
#include "tests/node-agent/peer/peer_test_support.h"

namespace modelplane::agent {
namespace {

using namespace std::chrono_literals;
using std::chrono::system_clock;

class PeerScopeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto authority = core::testing::TestCertificateAuthority::Create("peer CA");
    ASSERT_TRUE(authority) << authority.error().ToString();
    authority_.emplace(std::move(*authority));
    auto verifier = core::StatementVerifier::FromCertificatePem(authority_->certificate_pem());
    ASSERT_TRUE(verifier) << verifier.error().ToString();
    verifier_ = std::make_shared<const core::StatementVerifier>(std::move(*verifier));
  }

  std::string Ticket(const std::string& node, const core::FileSetTree& files,
                     system_clock::time_point expires) const {
    auto ticket = core::SignPeerTicket(
        authority_->authority(), {.node = node, .files_root = files.root(), .expires = expires});
    EXPECT_TRUE(ticket) << ticket.error().ToString();
    return ticket.value_or("");
  }

  static std::string Reason(const core::Status& status) {
    if (status) return "allowed";
    const std::string& message = status.error().message();
    return message.substr(0, message.find(':'));
  }

  std::optional<core::testing::TestCertificateAuthority> authority_;
  std::shared_ptr<const core::StatementVerifier> verifier_;
  const std::vector<core::Sha256Bytes> revision_ = {
      core::Sha256Of("shard-1"), core::Sha256Of("shard-2"), core::Sha256Of("config")};
  const core::FileSetTree files_ = core::FileSetTree::Of(revision_);
  const system_clock::time_point now_ = system_clock::now();
};

TEST_F(PeerScopeTest, ATicketForTheAskingNodeOpensExactlyItsRevisionsFiles) {
  const PeerScope scope(verifier_);
  const std::string ticket = Ticket("node-a", files_, now_ + 1h);
  for (const core::Sha256Bytes& blob : revision_) {
    const std::string proof = core::FormatFileSetProof(*files_.ProofOf(blob));
    EXPECT_EQ(Reason(scope.Check({.node = "node-a", .ticket = ticket, .proof = proof, .blob = blob},
                                 now_)),
              "allowed");
  }
  // Another blob the peer holds (another revision's), with a proof that belongs to a file of
  // this one: not covered.
  const core::Sha256Bytes other = core::Sha256Of("another tenant's shard");
  const std::string borrowed = core::FormatFileSetProof(*files_.ProofOf(revision_[0]));
  EXPECT_EQ(Reason(scope.Check(
                {.node = "node-a", .ticket = ticket, .proof = borrowed, .blob = other}, now_)),
            kPeerScopeBlobNotInTicket);
  // ... nor with a proof from a tree that holds it, under a ticket for this revision.
  const std::vector<core::Sha256Bytes> with_other = {revision_[0], other};
  const core::FileSetTree other_tree = core::FileSetTree::Of(with_other);
  EXPECT_EQ(Reason(scope.Check({.node = "node-a",
                                .ticket = ticket,
                                .proof = core::FormatFileSetProof(*other_tree.ProofOf(other)),
                                .blob = other},
                               now_)),
            kPeerScopeBlobNotInTicket);
}

TEST_F(PeerScopeTest, EveryOtherRequestIsRefusedWithItsReason) {
  const PeerScope scope(verifier_);
  const core::Sha256Bytes blob = revision_[1];
  const std::string proof = core::FormatFileSetProof(*files_.ProofOf(blob));
  const std::string ticket = Ticket("node-a", files_, now_ + 1h);
  auto foreign_ca = core::testing::TestCertificateAuthority::Create("another CA");
  ASSERT_TRUE(foreign_ca);
  const std::string forged =
      *core::SignPeerTicket(foreign_ca->authority(),
                            {.node = "node-a", .files_root = files_.root(), .expires = now_ + 1h});

  const auto check = [&](std::string_view node, std::string_view with_ticket,
                         std::string_view with_proof) {
    return Reason(scope.Check(
        {.node = node, .ticket = with_ticket, .proof = with_proof, .blob = blob}, now_));
  };
  EXPECT_EQ(check("", ticket, proof), kPeerScopeNoNodeIdentity);  // a token, no certificate
  EXPECT_EQ(check("node-a", "", proof), kPeerScopeTicketMissing);
  EXPECT_EQ(check("node-a", forged, proof), kPeerScopeTicketInvalid);
  EXPECT_EQ(check("node-a", "v1.garbage", proof), kPeerScopeTicketInvalid);
  EXPECT_EQ(check("node-b", ticket, proof), kPeerScopeTicketForAnotherNode);  // a stolen ticket
  EXPECT_EQ(check("node-a", Ticket("node-a", files_, now_ - 31s), proof), kPeerScopeTicketExpired);
  EXPECT_EQ(check("node-a", Ticket("node-a", files_, now_ - 20s), proof), "allowed");  // skew
  EXPECT_EQ(check("node-a", ticket, ""), kPeerScopeBlobNotInTicket);
  EXPECT_EQ(check("node-a", ticket, "0.3.!!"), kPeerScopeBlobNotInTicket);
}

TEST_F(PeerScopeTest, ARememberedTicketStillExpires) {
  const PeerScope scope(verifier_);
  const core::Sha256Bytes blob = revision_[0];
  const std::string proof = core::FormatFileSetProof(*files_.ProofOf(blob));
  const std::string ticket = Ticket("node-a", files_, now_ + 1min);
  const PeerScopeRequest request{.node = "node-a", .ticket = ticket, .proof = proof, .blob = blob};
  EXPECT_EQ(Reason(scope.Check(request, now_)), "allowed");
  EXPECT_EQ(Reason(scope.Check(request, now_ + 2min)), kPeerScopeTicketExpired);
  EXPECT_EQ(
      Reason(scope.Check({.node = "node-b", .ticket = ticket, .proof = proof, .blob = blob}, now_)),
      kPeerScopeTicketForAnotherNode);
}

// The server and the client as the agent runs them: per-node certificates naming
// PeerIdentityName(node), tickets in the requests, 403 with the reason for the rest.
class PeerServerScopeTest : public PeerScopeTest {
 protected:
  void SetUp() override {
    PeerScopeTest::SetUp();
    cache_.SetUp();
    for (const std::string node : {"holder", "node-a", "node-b"}) {
      auto pair = authority_->Issue("modelplane-peer", {core::api::PeerIdentityName(node)});
      ASSERT_TRUE(pair) << pair.error().ToString();
      std::ofstream(Path(node + ".pem")) << pair->certificate_pem << pair->private_key_pem;
    }
    std::ofstream(Path("ca.pem")) << authority_->certificate_pem();
  }

  std::string Path(const std::string& name) const { return cache_.directory() + "/" + name; }

  std::unique_ptr<PeerServer> StartScopedServer() {
    PeerServerOptions options;
    options.tls = core::TlsServerOptions{.certificate_chain_file = Path("holder.pem"),
                                         .private_key_file = Path("holder.pem"),
                                         .client_ca_file = Path("ca.pem")};
    options.ticket_verifier = verifier_;
    options.stop_grace = 5s;
    return cache_.StartServer(std::move(options));
  }

  // The agent's own peer client for `node`, showing `ticket` for `files`.
  std::unique_ptr<PeerRangeSource> Client(const PeerServer& server, const std::string& node,
                                          PeerTicketHolding ticket) {
    PeerRangeSourceOptions options{.endpoint = "127.0.0.1:" + std::to_string(server.port())};
    options.tls = core::TlsClientOptions{.ca_file = Path("ca.pem"),
                                         .certificate_chain_file = Path(node + ".pem"),
                                         .private_key_file = Path(node + ".pem"),
                                         .server_name = core::api::PeerIdentityName("holder")};
    options.ticket = std::move(ticket);
    auto source = PeerRangeSource::Create(std::move(options), cache_.clock());
    EXPECT_TRUE(source) << source.error().ToString();
    return std::move(*source);
  }

  static SourceFile FileOf(const testing::TestBlob& blob) {
    return {.path = "blob", .sha256 = blob.digest, .size = blob.bytes.size()};
  }

  testing::PeerCache cache_;
};

TEST_F(PeerServerScopeTest, ANodeReadsWhatItsTicketCoversAndNothingElse) {
  const testing::TestBlob mine = cache_.AddBlob(300'000, 1);
  const testing::TestBlob theirs = cache_.AddBlob(200'000, 2);  // another revision's file
  auto server = StartScopedServer();
  ASSERT_TRUE(server);
  const std::vector<core::Sha256Bytes> revision = {mine.digest, core::Sha256Of("absent")};
  auto files = std::make_shared<const core::FileSetTree>(core::FileSetTree::Of(revision));
  const PeerTicketHolding ticket{.ticket = Ticket("node-a", *files, now_ + 1h), .files = files};

  auto node_a = Client(*server, "node-a", ticket);
  std::string bytes(mine.bytes.size(), '\0');
  auto read = node_a->ReadRange(FileOf(mine), 0, std::as_writable_bytes(std::span(bytes)), {});
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_EQ(bytes, mine.bytes);

  // A blob the peer holds but the ticket does not cover: the client has no proof for it, so it
  // sends no ticket either, and the server says so.
  std::string other(theirs.bytes.size(), '\0');
  auto outside = node_a->ReadRange(FileOf(theirs), 0, std::as_writable_bytes(std::span(other)), {});
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().code(), core::ErrorCode::kPermissionDenied);
  EXPECT_FALSE(outside.error().retryable());
  EXPECT_NE(outside.error().message().find("HTTP 403"), std::string::npos)
      << outside.error().ToString();

  // Node B, with node A's ticket (copied from A's ModelCache), is refused; so is a node
  // without any ticket.
  auto node_b = Client(*server, "node-b", ticket);
  auto stolen = node_b->ReadRange(FileOf(mine), 0, std::as_writable_bytes(std::span(bytes)), {});
  ASSERT_FALSE(stolen);
  EXPECT_EQ(stolen.error().code(), core::ErrorCode::kPermissionDenied);
  auto without = Client(*server, "node-b", {});
  auto bare = without->ReadRange(FileOf(mine), 0, std::as_writable_bytes(std::span(bytes)), {});
  ASSERT_FALSE(bare);
  EXPECT_EQ(bare.error().code(), core::ErrorCode::kPermissionDenied);

  // A renewed ticket reaches a running client.
  node_b->SetTicket({.ticket = Ticket("node-b", *files, now_ + 1h), .files = files});
  auto renewed = node_b->ReadRange(FileOf(mine), 0, std::as_writable_bytes(std::span(bytes)), {});
  ASSERT_TRUE(renewed) << renewed.error().ToString();

  const std::string log = cache_.log();
  EXPECT_NE(log.find(std::string(kPeerScopeTicketForAnotherNode)), std::string::npos) << log;
  const std::string exposed = cache_.metrics().ExposeText();
  EXPECT_NE(exposed.find("modelplane_peer_scope_refusals_total{reason=\"PeerTicketMissing\"} 2"),
            std::string::npos)
      << exposed;
  EXPECT_NE(
      exposed.find("modelplane_peer_scope_refusals_total{reason=\"PeerTicketForAnotherNode\"} 1"),
      std::string::npos)
      << exposed;
  EXPECT_NE(exposed.find("modelplane_peer_requests_total{code=\"403\"} 3"), std::string::npos)
      << exposed;
  EXPECT_NE(log.find(std::string(kPeerScopeTicketMissing)), std::string::npos) << log;
}

TEST_F(PeerServerScopeTest, ARefusalSaysWhyAndShowsNeitherBytesNorSize) {
  const testing::TestBlob mine = cache_.AddBlob(100'000, 1);
  const testing::TestBlob theirs = cache_.AddBlob(100'000, 2);
  auto server = StartScopedServer();
  ASSERT_TRUE(server);
  core::ClientOptions options;
  options.tls = core::TlsClientOptions{.ca_file = Path("ca.pem"),
                                       .certificate_chain_file = Path("node-b.pem"),
                                       .private_key_file = Path("node-b.pem"),
                                       .server_name = core::api::PeerIdentityName("holder")};
  options.retry.max_attempts = 1;
  auto client = core::HttpClient::Create(std::move(options));
  ASSERT_TRUE(client);
  const std::vector<core::Sha256Bytes> revision = {mine.digest, core::Sha256Of("absent")};
  const core::FileSetTree files = core::FileSetTree::Of(revision);
  const std::string ticket = Ticket("node-b", files, now_ + 1h);
  const std::string borrowed = core::FormatFileSetProof(*files.ProofOf(mine.digest));
  struct Case {
    core::Sha256Bytes blob;
    std::string ticket;
    std::string proof;
    std::string_view reason;
  };
  for (const Case& request_case :
       {Case{mine.digest, "", "", kPeerScopeTicketMissing},
        Case{theirs.digest, ticket, borrowed, kPeerScopeBlobNotInTicket},
        Case{mine.digest, Ticket("node-a", files, now_ + 1h), borrowed,
             kPeerScopeTicketForAnotherNode},
        Case{mine.digest, Ticket("node-b", files, now_ - 1h), borrowed, kPeerScopeTicketExpired}}) {
    for (const auto method : {boost::beast::http::verb::get, boost::beast::http::verb::head}) {
      core::ClientRequest request;
      request.method = method;
      request.url =
          "https://127.0.0.1:" + std::to_string(server->port()) + PeerBlobPath(request_case.blob);
      if (!request_case.ticket.empty()) {
        request.headers.set(std::string(core::kPeerTicketHeader), request_case.ticket);
        request.headers.set(std::string(core::kPeerProofHeader), request_case.proof);
      }
      auto answer = (*client)->Fetch(request);
      ASSERT_FALSE(answer) << request_case.reason;
      EXPECT_EQ(answer.error().http_status(), 403U) << answer.error().ToString();
      if (method == boost::beast::http::verb::get) {  // a HEAD answer has no body
        EXPECT_NE(answer.error().message().find(std::string(request_case.reason)),
                  std::string::npos)
            << answer.error().ToString();
      }
    }
  }
}

}  // namespace
}  // namespace modelplane::agent
