// The agent's credentials client and the S3 client's second try, against real HTTP servers on
// 127.0.0.1: one playing the operator's credentials endpoint over TLS, one playing an object
// store that refuses the old keys.
#include "node-agent/sources/operator_credentials.h"

#include <atomic>
#include <fstream>
#include <mutex>

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/http/http_server.h"
#include "node-agent/sources/s3_client.h"
#include "tests/core/http/test_certificates.h"

namespace modelplane::agent {
namespace {

using core::ErrorCode;
using ::testing::HasSubstr;
namespace http = boost::beast::http;

class OperatorCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto directory = core::testing::TemporaryDirectory::Create("operator-credentials");
    ASSERT_TRUE(directory);
    directory_.emplace(std::move(*directory));
    auto pki = core::testing::MakeTestPki(directory_->path() + "/pki");
    ASSERT_TRUE(pki) << pki.error().ToString();
    ca_file_ = pki->ca_file;
    token_file_ = directory_->path() + "/token";
    WriteToken("token-1");
    core::ServerOptions options;
    options.tls = core::TlsServerOptions{.certificate_chain_file = pki->server_certificate_file,
                                         .private_key_file = pki->server_key_file};
    core::Router router;
    router.HandlePrefix(http::verb::get, "/credentials/v1/", [this](const core::ServerRequest& r) {
      const std::scoped_lock lock(mutex_);
      ++requests_;
      const auto header = r.headers.find(http::field::authorization);
      last_authorization_ = header == r.headers.end() ? "" : std::string(header->value());
      last_path_ = r.path;
      return core::ServerResponse::Text(status_, body_, "application/json");
    });
    auto server = core::HttpServer::Create(std::move(options), std::move(router));
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  void WriteToken(const std::string& token) { std::ofstream(token_file_) << token << "\n"; }
  void Answer(http::status status, std::string body) {
    const std::scoped_lock lock(mutex_);
    status_ = status;
    body_ = std::move(body);
  }
  int requests() {
    const std::scoped_lock lock(mutex_);
    return requests_;
  }
  std::unique_ptr<OperatorCredentials> Client() {
    auto client =
        OperatorCredentials::Create({.url = fmt::format("https://127.0.0.1:{}", server_->port()),
                                     .token_file = token_file_,
                                     .ca_file = ca_file_,
                                     .ttl = std::chrono::seconds(300),
                                     .min_refresh = std::chrono::seconds(10),
                                     .clock = clock_},
                                    *core::Logger::Create({.component = "test"}));
    EXPECT_TRUE(client) << client.error().ToString();
    return client ? std::move(*client) : nullptr;
  }

  std::optional<core::testing::TemporaryDirectory> directory_;
  std::string ca_file_;
  std::string token_file_;
  std::shared_ptr<core::ManualClock> clock_ = std::make_shared<core::ManualClock>();
  std::unique_ptr<core::HttpServer> server_;
  std::mutex mutex_;
  int requests_ = 0;
  std::string last_authorization_;
  std::string last_path_;
  http::status status_ = http::status::ok;
  std::string body_ = R"({"accessKeyId":"AKIA1","secretAccessKey":"s1"})";
};

TEST_F(OperatorCredentialsTest, KeptInMemoryForTheTtlAndAskedAgainWhenTheStoreRefusesThem) {
  auto client = Client();
  ASSERT_NE(client, nullptr);
  auto first = client->Read("team-a", "keys", false);
  ASSERT_TRUE(first) << first.error().ToString();
  EXPECT_EQ(first->access_key_id, "AKIA1");
  EXPECT_EQ(first->secret_access_key, "s1");
  EXPECT_EQ(requests(), 1);
  EXPECT_EQ(last_path_, "/credentials/v1/team-a/keys");
  EXPECT_EQ(last_authorization_, "Bearer token-1");
  // From memory within the TTL; a refused key asked again only after min_refresh, so many ranges
  // refused at once make one request.
  EXPECT_TRUE(client->Read("team-a", "keys", false));
  EXPECT_TRUE(client->Read("team-a", "keys", true));
  EXPECT_EQ(requests(), 1);
  clock_->Advance(std::chrono::seconds(11));
  Answer(http::status::ok, R"({"accessKeyId":"AKIA2","secretAccessKey":"s2","sessionToken":"t"})");
  WriteToken("token-2");  // kubelet rotated the projected token: read on each request
  auto rotated = client->Read("team-a", "keys", true);
  ASSERT_TRUE(rotated) << rotated.error().ToString();
  EXPECT_EQ(rotated->access_key_id, "AKIA2");
  EXPECT_EQ(rotated->session_token, "t");
  EXPECT_EQ(requests(), 2);
  EXPECT_EQ(last_authorization_, "Bearer token-2");
  clock_->Advance(std::chrono::seconds(301));
  EXPECT_TRUE(client->Read("team-a", "keys", false));
  EXPECT_EQ(requests(), 3);
  // Another Secret is another entry.
  EXPECT_TRUE(client->Read("team-b", "keys", false));
  EXPECT_EQ(requests(), 4);
}

TEST_F(OperatorCredentialsTest, RefusalsKeepTheirMeaning) {
  auto client = Client();
  ASSERT_NE(client, nullptr);
  Answer(http::status::forbidden, "no revision this node's ModelCache names may use Secret x/y");
  auto refused = client->Read("x", "y", false);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_FALSE(refused.error().retryable());
  EXPECT_THAT(refused.error().message(), HasSubstr("no revision this node's ModelCache names"));
  Answer(http::status::not_found, "Secret x/y does not exist");
  EXPECT_EQ(client->Read("x", "y", false).error().code(), ErrorCode::kNotFound);
  Answer(http::status::service_unavailable, "TokenReview: unavailable");
  auto later = client->Read("x", "y", false);
  ASSERT_FALSE(later);
  EXPECT_TRUE(later.error().retryable());
  Answer(http::status::ok, R"({"accessKeyId":""})");
  EXPECT_EQ(client->Read("x", "y", false).error().code(), ErrorCode::kUnauthenticated);
  // Nothing refused was kept: the next answer is used at once.
  Answer(http::status::ok, R"({"accessKeyId":"AKIA1","secretAccessKey":"s1"})");
  EXPECT_TRUE(client->Read("x", "y", false));
}

TEST_F(OperatorCredentialsTest, AHubTokenAndObjectStoreKeysComeFromOneAnswer) {
  auto client = Client();
  ASSERT_NE(client, nullptr);
  Answer(http::status::ok, R"({"token":"hf_abc"})");
  auto token = client->ReadToken("team-a", "hub", false);
  ASSERT_TRUE(token) << token.error().ToString();
  EXPECT_EQ(*token, "hf_abc");
  auto keys = client->Read("team-a", "hub", false);
  ASSERT_FALSE(keys);
  EXPECT_EQ(keys.error().code(), ErrorCode::kUnauthenticated);
  EXPECT_THAT(keys.error().message(), ::testing::Not(HasSubstr("hf_abc")));
  EXPECT_EQ(requests(), 1);  // one answer, kept for both
  Answer(http::status::ok, R"({"accessKeyId":"AKIA1","secretAccessKey":"s1"})");
  auto no_token = client->ReadToken("team-b", "keys", false);
  ASSERT_FALSE(no_token);
  EXPECT_EQ(no_token.error().code(), ErrorCode::kUnauthenticated);
}

TEST_F(OperatorCredentialsTest, OnlyOverTlsAndWithAToken) {
  auto plain = OperatorCredentials::Create({.url = "http://127.0.0.1:1", .token_file = token_file_},
                                           *core::Logger::Create({.component = "test"}));
  ASSERT_FALSE(plain);
  EXPECT_EQ(plain.error().code(), ErrorCode::kInvalidArgument);
  auto no_token = OperatorCredentials::Create({.url = "https://127.0.0.1:1"},
                                              *core::Logger::Create({.component = "test"}));
  ASSERT_FALSE(no_token);
  // A token file that is gone fails the read, retryably (kubelet may be rewriting it).
  auto client = Client();
  ASSERT_NE(client, nullptr);
  std::remove(token_file_.c_str());
  auto missing = client->Read("x", "y", false);
  ASSERT_FALSE(missing);
  EXPECT_TRUE(missing.error().retryable());
  // One over its bound is refused before it is read whole, and stays refused.
  WriteToken(std::string(64 * 1024 + 1, 't'));
  auto too_big = client->Read("x", "y", false);
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(too_big.error().retryable());
  EXPECT_EQ(requests(), 0);
}

// An object store that accepts only the key "new": the S3 client signs with "old", is refused,
// asks for fresh credentials once and signs again.
TEST(S3ClientRefresh, ARefusedRequestIsSignedAgainWithFreshCredentials) {
  std::atomic<int> refused{0};
  core::Router router;
  router.HandlePrefix(http::verb::get, "/", [&](const core::ServerRequest& request) {
    const auto header = request.headers.find(http::field::authorization);
    const std::string authorization =
        header == request.headers.end() ? "" : std::string(header->value());
    if (authorization.find("Credential=new/") == std::string::npos) {
      ++refused;
      return core::ServerResponse::Text(http::status::forbidden, "");
    }
    return core::ServerResponse::Text(http::status::ok, "x");
  });
  auto server = core::HttpServer::Create({}, std::move(router));
  ASSERT_TRUE(server) << server.error().ToString();
  int refreshes = 0;
  S3ClientOptions options{.endpoint = fmt::format("http://127.0.0.1:{}", (*server)->port()),
                          .credentials = {.access_key_id = "old", .secret_access_key = "s"}};
  options.refresh_credentials = [&]() -> core::Result<SigningCredentials> {
    ++refreshes;
    return SigningCredentials{.access_key_id = "new", .secret_access_key = "s"};
  };
  options.http.retry.max_attempts = 1;
  auto client = S3Client::Create(options);
  ASSERT_TRUE(client) << client.error().ToString();
  auto head = (*client)->HeadObject("models", "a.bin");
  ASSERT_TRUE(head) << head.error().ToString();
  EXPECT_EQ(*head, 1u);
  EXPECT_EQ(refused.load(), 1);
  EXPECT_EQ(refreshes, 1);
  // Later requests sign with the fresh keys at once.
  EXPECT_TRUE((*client)->HeadObject("models", "b.bin"));
  EXPECT_EQ(refused.load(), 1);
  EXPECT_EQ(refreshes, 1);
  // Without a refresh function a refusal is final.
  options.refresh_credentials = nullptr;
  auto fixed = S3Client::Create(options);
  ASSERT_TRUE(fixed);
  auto denied = (*fixed)->HeadObject("models", "a.bin");
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(refused.load(), 2);
  (*server)->Stop();
}

}  // namespace
}  // namespace modelplane::agent
