// Mutual TLS between two node agents' peer servers and clients on distinct addresses, each with
// a certificate of its own node (as the operator's signer issues them), inside a network
// namespace the test makes: 10.203.0.1 is node gpu-a, 10.203.0.2 node gpu-b. The test forks; the
// child unshares its network namespace (root only, else the test is skipped), adds the two
// addresses and runs the checks, so nothing touches the host's network.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/api/peer_identity.h"
#include "core/pki/certificate_authority.h"
#include "core/pki/private_key.h"
#include "node-agent/peer/peer_range_source.h"
#include "tests/node-agent/peer/peer_test_support.h"

namespace modelplane::agent {
namespace {

using namespace std::chrono_literals;

constexpr int kSkip = 77;
constexpr const char* kAddressA = "10.203.0.1";
constexpr const char* kAddressB = "10.203.0.2";

struct NodeIdentity {
  std::string file;  // key and certificate, as the agent keeps them
};

// What the agent and the signer do, without the API server: a key made here, a request for the
// node's identity name and address, a certificate with exactly those names.
NodeIdentity IssueFor(const core::CertificateAuthority& authority, const std::string& node,
                      const std::string& address, const std::string& directory) {
  auto key = core::PrivateKey::Generate();
  EXPECT_TRUE(key);
  auto request = core::CertificateRequest::Parse(*core::MakeCertificateRequestPem(*key, {}));
  EXPECT_TRUE(request);
  const auto now = std::chrono::system_clock::now();
  auto certificate =
      authority.Issue(*request, {.names = {.common_name = std::string(core::api::kPeerCommonName),
                                           .dns_names = {core::api::PeerIdentityName(node)},
                                           .ip_addresses = {address}},
                                 .not_before = now - 5min,
                                 .not_after = now + 1h});
  EXPECT_TRUE(certificate) << certificate.error().ToString();
  NodeIdentity identity{.file = directory + "/" + node + ".pem"};
  std::ofstream(identity.file) << key->ToPem() << *certificate;
  return identity;
}

class PeerMutualTlsNetnsTest : public ::testing::Test {
 protected:
  // Runs in the child, inside its own network namespace.
  void RunChecks() {
    cache_.SetUp();
    const testing::TestBlob blob = cache_.AddBlob(3 * 1024 * 1024 + 5);
    auto authority =
        core::CertificateAuthority::Generate("peer CA", std::chrono::system_clock::now() + 2h);
    ASSERT_TRUE(authority);
    const std::string ca_file = cache_.directory() + "/peer-ca.crt";
    std::ofstream(ca_file) << authority->certificate_pem();
    const NodeIdentity a = IssueFor(*authority, "gpu-a", kAddressA, cache_.directory());
    const NodeIdentity b = IssueFor(*authority, "gpu-b", kAddressB, cache_.directory());

    auto serve = [&](const std::string& address, const NodeIdentity& identity) {
      PeerServerOptions options;
      options.address = address;
      options.advertise_address = address;
      options.tls = core::TlsServerOptions{.certificate_chain_file = identity.file,
                                           .private_key_file = identity.file,
                                           .client_ca_file = ca_file};
      options.stop_grace = 5s;
      return cache_.StartServer(std::move(options));
    };
    auto server_a = serve(kAddressA, a);
    auto server_b = serve(kAddressB, b);
    ASSERT_TRUE(server_a && server_b);

    // A client as agent `self` calls the peer at `endpoint`, expecting it to be `node`.
    auto read = [&](const NodeIdentity* self, const std::string& endpoint, const std::string& node,
                    const std::string& ca = "") {
      PeerRangeSourceOptions options{.endpoint = endpoint};
      options.tls = core::TlsClientOptions{.ca_file = ca.empty() ? ca_file : ca,
                                           .server_name = core::api::PeerIdentityName(node)};
      if (self != nullptr) {
        options.tls->certificate_chain_file = self->file;
        options.tls->private_key_file = self->file;
      }
      options.connect_timeout = 2s;
      options.stall_timeout = 5s;
      auto source = PeerRangeSource::Create(std::move(options), cache_.clock());
      EXPECT_TRUE(source) << source.error().ToString();
      std::vector<std::byte> destination(blob.bytes.size());
      const SourceFile file{
          .path = "w.safetensors", .sha256 = blob.digest, .size = blob.bytes.size()};
      auto status = (*source)->ReadRange(file, 0, destination, {});
      if (status) {
        EXPECT_EQ(
            std::string(reinterpret_cast<const char*>(destination.data()), destination.size()),
            blob.bytes);
      }
      return status;
    };
    const std::string endpoint_a = server_a->endpoint();
    const std::string endpoint_b = server_b->endpoint();
    ASSERT_EQ(endpoint_a.rfind(kAddressA, 0), 0U) << endpoint_a;

    // Each agent reads from the other, both sides proving their node with their certificate.
    auto a_from_b = read(&a, endpoint_b, "gpu-b");
    EXPECT_TRUE(a_from_b) << a_from_b.error().ToString();
    auto b_from_a = read(&b, endpoint_a, "gpu-a");
    EXPECT_TRUE(b_from_a) << b_from_a.error().ToString();

    // The peer at gpu-b's address is not who a client expecting gpu-a (or any other node) dials:
    // a certificate of the wrong node fails the handshake, whatever its address says.
    auto wrong_node = read(&a, endpoint_b, "gpu-a");
    ASSERT_FALSE(wrong_node);
    EXPECT_EQ(wrong_node.error().code(), core::ErrorCode::kUnauthenticated)
        << wrong_node.error().ToString();

    // gpu-a impersonating gpu-b: its own valid certificate served on gpu-b's address.
    server_b->Stop();
    PeerServerOptions impostor;
    impostor.address = kAddressB;
    impostor.advertise_address = kAddressB;
    impostor.tls = core::TlsServerOptions{
        .certificate_chain_file = a.file, .private_key_file = a.file, .client_ca_file = ca_file};
    impostor.stop_grace = 5s;
    auto impostor_server = cache_.StartServer(std::move(impostor));
    ASSERT_TRUE(impostor_server);
    auto fooled = read(&b, impostor_server->endpoint(), "gpu-b");
    ASSERT_FALSE(fooled);
    EXPECT_EQ(fooled.error().code(), core::ErrorCode::kUnauthenticated)
        << fooled.error().ToString();
    impostor_server->Stop();

    // No client certificate, or one of another CA: refused by the server (401).
    auto anonymous = read(nullptr, endpoint_a, "gpu-a");
    ASSERT_FALSE(anonymous);
    EXPECT_EQ(anonymous.error().code(), core::ErrorCode::kUnauthenticated);
    auto other_ca =
        core::CertificateAuthority::Generate("other CA", std::chrono::system_clock::now() + 2h);
    ASSERT_TRUE(other_ca);
    std::filesystem::create_directories(cache_.directory() + "/other");
    const NodeIdentity stranger =
        IssueFor(*other_ca, "gpu-b", kAddressB, cache_.directory() + "/other");
    auto foreign = read(&stranger, endpoint_a, "gpu-a");
    ASSERT_FALSE(foreign);
    EXPECT_EQ(foreign.error().code(), core::ErrorCode::kUnauthenticated);
    server_a->Stop();
  }

  testing::PeerCache cache_;
};

// Makes the namespace: its own loopback, up, holding both addresses (no link type a kernel
// module provides is needed).
bool EnterNetworkNamespace() {
  if (::unshare(CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "unshare(CLONE_NEWNET) failed (not root?): skipping\n");
    return false;
  }
  const std::string setup = std::string("ip link set lo up && ip addr add ") + kAddressA +
                            "/32 dev lo && ip addr add " + kAddressB + "/32 dev lo";
  if (std::system(setup.c_str()) != 0) {  // NOLINT(concurrency-mt-unsafe): single-threaded child
    std::fprintf(stderr, "cannot set up the namespace's links with ip(8): skipping\n");
    return false;
  }
  return true;
}

TEST_F(PeerMutualTlsNetnsTest, TwoAgentsOnDistinctAddressesAuthenticateEachOtherByNode) {
  std::fflush(nullptr);
  // A bare fork, not tests/support/child_process.h: the child runs this test's code, no program.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (!EnterNetworkNamespace()) ::_exit(kSkip);
    RunChecks();
    std::fflush(nullptr);
    ::_exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of a signal";
  if (WEXITSTATUS(status) == kSkip) {
    GTEST_SKIP() << "could not make a network namespace (needs root for CLONE_NEWNET, and "
                    "ip(8)); the reason is above";
  }
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the checks in the namespace failed (see above)";
}

}  // namespace
}  // namespace modelplane::agent
