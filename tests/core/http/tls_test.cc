#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "core/http/http_client.h"
#include "core/http/http_server.h"
#include "tests/core/http/test_certificates.h"

namespace modelplane::core {
namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto directory = testing::TemporaryDirectory::Create("http-tls-");
    ASSERT_TRUE(directory) << directory.error().ToString();
    directory_.emplace(std::move(*directory));
    auto pki = testing::MakeTestPki(directory_->path(), "node-7");
    ASSERT_TRUE(pki) << pki.error().ToString();
    pki_ = *pki;
  }

  void StartServer(bool mutual) {
    Router router;
    const std::string blob = directory_->path() + "/blob";
    router.Handle(http::verb::get, "/blob", [blob](const ServerRequest&) {
      auto source = FileBodySource::Open(blob);
      if (!source) return ServerResponse::Text(http::status::not_found, "missing");
      return ServerResponse::Stream(std::move(*source));
    });
    router.Handle(http::verb::get, "/whoami", [](const ServerRequest& request) {
      const std::string name =
          request.peer_certificate ? request.peer_certificate->common_name : "anonymous";
      return ServerResponse::Text(http::status::ok, name);
    });
    ServerOptions options;
    options.tls = TlsServerOptions{pki_.server_certificate_file, pki_.server_key_file,
                                   mutual ? pki_.ca_file : std::string()};
    options.stop_grace = 5s;
    options.handshake_timeout = 5s;
    auto server = HttpServer::Create(std::move(options), std::move(router));
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
  }

  Result<ClientResponse> Fetch(TlsClientOptions tls, const std::string& host = "127.0.0.1") {
    ClientOptions options;
    options.tls = std::move(tls);
    options.retry.max_attempts = 2;
    options.retry.initial_backoff = 1ms;
    options.connect_timeout = 5s;
    options.read_timeout = 5s;
    auto client = HttpClient::Create(std::move(options));
    if (!client) return std::unexpected(client.error());
    ClientRequest request;
    request.url = "https://" + host + ":" + std::to_string(server_->port()) + "/whoami";
    return (*client)->Fetch(request);
  }

  std::optional<testing::TemporaryDirectory> directory_;
  testing::TestPki pki_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(TlsTest, ClientVerifiesTheServerAgainstItsCa) {
  StartServer(/*mutual=*/false);
  auto response = Fetch({.ca_file = pki_.ca_file});
  ASSERT_TRUE(response) << response.error().ToString();
  EXPECT_EQ(response->body, "anonymous");
  // The certificate also names "localhost"; the host name is checked, not only the chain.
  auto by_name = Fetch({.ca_file = pki_.ca_file}, "localhost");
  ASSERT_TRUE(by_name) << by_name.error().ToString();
  // The CA may also come as PEM text.
  std::ifstream ca_file(pki_.ca_file);
  const std::string ca_pem((std::istreambuf_iterator<char>(ca_file)),
                           std::istreambuf_iterator<char>());
  auto from_pem = Fetch({.ca_pem = ca_pem});
  ASSERT_TRUE(from_pem) << from_pem.error().ToString();
}

TEST_F(TlsTest, ClientRejectsAServerSignedByAnotherCa) {
  StartServer(/*mutual=*/false);
  auto response = Fetch({.ca_file = pki_.other_ca_file});
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().code(), ErrorCode::kUnauthenticated);
  EXPECT_FALSE(response.error().retryable());
  EXPECT_EQ(server_->stats().requests, 0U);
}

// Without TLS options the client trusts the system's store, loaded on the first https request
// (a plain-http client never parses it): a server signed by the test CA is refused.
TEST_F(TlsTest, ClientWithoutTlsOptionsChecksTheSystemTrustStoreOnFirstUse) {
  StartServer(/*mutual=*/false);
  ClientOptions options;
  options.retry.max_attempts = 1;
  options.connect_timeout = 5s;
  options.read_timeout = 5s;
  auto client = HttpClient::Create(std::move(options));
  ASSERT_TRUE(client) << client.error().ToString();
  ClientRequest request;
  request.url = "https://127.0.0.1:" + std::to_string(server_->port()) + "/whoami";
  for (int attempt = 0; attempt < 2; ++attempt) {  // the second reuses the context made first
    auto response = (*client)->Fetch(request);
    ASSERT_FALSE(response);
    EXPECT_EQ(response.error().code(), ErrorCode::kUnauthenticated) << response.error().ToString();
  }
  EXPECT_EQ(server_->stats().requests, 0U);
}

TEST_F(TlsTest, AServerNameReplacesTheDialedHostInTheCertificateCheck) {
  StartServer(/*mutual=*/false);
  // Dialed by address, verified by name: the certificate names "localhost".
  auto named = Fetch({.ca_file = pki_.ca_file, .server_name = "localhost"});
  ASSERT_TRUE(named) << named.error().ToString();
  // A name the certificate does not carry fails although the address it was dialed by matches.
  auto other = Fetch({.ca_file = pki_.ca_file, .server_name = "node-8.example"});
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(server_->stats().requests, 1U);
}

TEST_F(TlsTest, AReloadServesTheRenewedCertificateToNewConnections) {
  StartServer(/*mutual=*/false);
  ASSERT_TRUE(Fetch({.ca_file = pki_.ca_file}));
  // Renewal by another CA, written over the same files, as a rotation would.
  auto renewed = testing::MakeTestPki(directory_->path() + "/renewed");
  ASSERT_TRUE(renewed) << renewed.error().ToString();
  std::filesystem::copy_file(renewed->server_certificate_file, pki_.server_certificate_file,
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(renewed->server_key_file, pki_.server_key_file,
                             std::filesystem::copy_options::overwrite_existing);
  ASSERT_TRUE(server_->ReloadTls());
  EXPECT_TRUE(Fetch({.ca_file = renewed->ca_file}));
  EXPECT_FALSE(Fetch({.ca_file = pki_.ca_file}));
  // A broken file keeps the current certificate in use.
  std::ofstream(pki_.server_key_file, std::ios::trunc) << "not a key";
  EXPECT_FALSE(server_->ReloadTls());
  EXPECT_TRUE(Fetch({.ca_file = renewed->ca_file}));
}

TEST_F(TlsTest, MutualTlsRejectsAClientWithoutCertificate) {
  StartServer(/*mutual=*/true);
  auto response = Fetch({.ca_file = pki_.ca_file});
  ASSERT_FALSE(response);
  // TLS 1.3 finishes the client's handshake before the server checks the certificate, so the
  // refusal arrives as an alert on the first read.
  EXPECT_EQ(response.error().code(), ErrorCode::kUnauthenticated) << response.error().ToString();
  EXPECT_FALSE(response.error().retryable());
  EXPECT_EQ(server_->stats().requests, 0U);
}

TEST_F(TlsTest, MutualTlsAcceptsACertificateFromTheCaAndShowsTheHandlerItsName) {
  StartServer(/*mutual=*/true);
  auto response = Fetch({.ca_file = pki_.ca_file,
                         .certificate_chain_file = pki_.client_certificate_file,
                         .private_key_file = pki_.client_key_file});
  ASSERT_TRUE(response) << response.error().ToString();
  EXPECT_EQ(response->body, "node-7");
}

TEST_F(TlsTest, StreamsAFileOverOneKeptAliveTlsConnection) {
  std::string content(3 * 1024 * 1024 + 5, '\0');
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i % 253);
  std::ofstream(directory_->path() + "/blob", std::ios::binary) << content;
  StartServer(/*mutual=*/false);
  ClientOptions options;
  options.tls = TlsClientOptions{.ca_file = pki_.ca_file};
  auto client = HttpClient::Create(std::move(options));
  ASSERT_TRUE(client) << client.error().ToString();
  ClientRequest request;
  request.url = "https://127.0.0.1:" + std::to_string(server_->port()) + "/blob";
  auto whole = (*client)->Fetch(request, content.size());
  ASSERT_TRUE(whole) << whole.error().ToString();
  EXPECT_TRUE(whole->body == content);
  request.range_first = 1'000'000;
  request.range_last = 1'999'999;
  auto part = (*client)->Fetch(request);
  ASSERT_TRUE(part) << part.error().ToString();
  EXPECT_TRUE(part->body == content.substr(1'000'000, 1'000'000));
  EXPECT_EQ(server_->stats().accepted_connections, 1U);
}

TEST_F(TlsTest, BadServerKeyFailsAtCreate) {
  ServerOptions options;
  options.tls = TlsServerOptions{pki_.server_certificate_file, pki_.client_key_file, ""};
  auto server = HttpServer::Create(std::move(options), Router());
  ASSERT_FALSE(server);
  EXPECT_EQ(server.error().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace modelplane::core
