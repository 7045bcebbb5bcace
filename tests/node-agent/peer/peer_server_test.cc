#include "node-agent/peer/peer_server.h"

#include <cctype>
#include <chrono>
#include <fstream>
#include <span>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include "core/http/http_client.h"
#include "core/io/unique_fd.h"
#include "node-agent/peer/peer_protocol.h"
#include "node-agent/peer/peer_range_source.h"
#include "tests/core/http/test_connection.h"
#include "tests/node-agent/peer/peer_test_support.h"

namespace modelplane::agent {
namespace {

namespace http = boost::beast::http;
using core::testing::MakeRawRequest;
using core::testing::TestConnection;
using core::testing::TestResponse;
using namespace std::chrono_literals;

// Whether this machine lets a socket bind `address` (Linux routes all of 127/8 to loopback, some
// sandboxes only 127.0.0.1).
bool CanBind(const char* address) {
  core::UniqueFd socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in ip{};
  ip.sin_family = AF_INET;
  return socket.valid() && ::inet_pton(AF_INET, address, &ip.sin_addr) == 1 &&
         ::bind(socket.get(), reinterpret_cast<sockaddr*>(&ip), sizeof(ip)) == 0;
}

class PeerServerTest : public ::testing::Test {
 protected:
  void SetUp() override { cache_.SetUp(); }

  // A GET (or HEAD) on a fresh raw connection, signed with `key` unless it is null.
  core::Result<TestResponse> Request(const PeerServer& server, std::string_view method,
                                     const std::string& path, const PeerTokenKey* key,
                                     std::string extra_headers = {},
                                     std::chrono::seconds lifetime = 60s) {
    if (key != nullptr) {
      extra_headers += "Authorization: " +
                       SignPeerToken(*key, ScopeAt(server, method, path),
                                     std::chrono::system_clock::now() + lifetime) +
                       "\r\n";
    }
    auto connection = TestConnection::Open(server.port());
    if (!connection) return std::unexpected(connection.error());
    return (*connection)->RoundTrip(MakeRawRequest(method, path, extra_headers), method == "HEAD");
  }

  // A token for `server` (its endpoint is the audience) and this request.
  static PeerTokenScope ScopeAt(const PeerServer& server, std::string_view method,
                                std::string_view path) {
    return {.audience = server.endpoint(), .method = method, .path = path};
  }

  testing::PeerCache cache_;
  const PeerTokenKey key_ = testing::MakeKey();
};

TEST_F(PeerServerTest, ServesWholeAndRangedBlobsByteExact) {
  const testing::TestBlob blob = cache_.AddBlob(3 * 1024 * 1024 + 17);
  auto server = cache_.StartServer(testing::PeerCache::PlainTokenOptions());
  ASSERT_TRUE(server);
  const std::string path = PeerBlobPath(blob.digest);

  auto whole = Request(*server, "GET", path, &key_);
  ASSERT_TRUE(whole) << whole.error().ToString();
  EXPECT_EQ(whole->result(), http::status::ok);
  EXPECT_EQ(whole->body(), blob.bytes);

  auto ranged = Request(*server, "GET", path, &key_, "Range: bytes=1000-1048575\r\n");
  ASSERT_TRUE(ranged) << ranged.error().ToString();
  EXPECT_EQ(ranged->result(), http::status::partial_content);
  EXPECT_EQ(ranged->body(), blob.bytes.substr(1000, 1048576 - 1000));
  EXPECT_EQ(ranged->at(http::field::content_range),
            "bytes 1000-1048575/" + std::to_string(blob.bytes.size()));

  auto tail = Request(*server, "GET", path, &key_, "Range: bytes=-5\r\n");
  ASSERT_TRUE(tail) << tail.error().ToString();
  EXPECT_EQ(tail->result(), http::status::partial_content);
  EXPECT_EQ(tail->body(), blob.bytes.substr(blob.bytes.size() - 5));

  const std::string metrics = cache_.metrics().ExposeText();
  EXPECT_NE(metrics.find("modelplane_peer_requests_total{code=\"200\"} 1"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("modelplane_peer_requests_total{code=\"206\"} 2"), std::string::npos)
      << metrics;
}

TEST_F(PeerServerTest, HeadGivesTheSizeWithoutBodyOrStream) {
  const testing::TestBlob blob = cache_.AddBlob(123'457);
  auto server = cache_.StartServer(testing::PeerCache::PlainTokenOptions());
  ASSERT_TRUE(server);
  auto head = Request(*server, "HEAD", PeerBlobPath(blob.digest), &key_);
  ASSERT_TRUE(head) << head.error().ToString();
  EXPECT_EQ(head->result(), http::status::ok);
  EXPECT_EQ(head->at(http::field::content_length), "123457");
  EXPECT_TRUE(head->body().empty());
  EXPECT_EQ(server->streams_in_flight(), 0u);
}

TEST_F(PeerServerTest, RefusesMissingExpiredAndMisdirectedTokensWith401) {
  const testing::TestBlob blob = cache_.AddBlob(4096);
  const testing::TestBlob other = cache_.AddBlob(4096, 2);
  auto server = cache_.StartServer(testing::PeerCache::PlainTokenOptions());
  ASSERT_TRUE(server);
  const std::string path = PeerBlobPath(blob.digest);
  const auto now = std::chrono::system_clock::now();
  const auto header = [](const std::string& value) { return "Authorization: " + value + "\r\n"; };

  auto missing = Request(*server, "GET", path, nullptr);
  ASSERT_TRUE(missing) << missing.error().ToString();
  EXPECT_EQ(missing->result(), http::status::unauthorized);
  EXPECT_EQ(std::string(missing->at(http::field::www_authenticate)), std::string(kPeerTokenScheme));

  // Expired well beyond the allowed clock skew (30 s).
  auto expired = Request(*server, "GET", path, nullptr,
                         header(SignPeerToken(key_, ScopeAt(*server, "GET", path), now - 5min)));
  ASSERT_TRUE(expired);
  EXPECT_EQ(expired->result(), http::status::unauthorized);
  EXPECT_NE(expired->body().find("expired"), std::string::npos) << expired->body();

  // A valid token for another blob, and one for HEAD used on GET.
  auto other_path = Request(
      *server, "GET", path, nullptr,
      header(SignPeerToken(key_, ScopeAt(*server, "GET", PeerBlobPath(other.digest)), now + 1min)));
  ASSERT_TRUE(other_path);
  EXPECT_EQ(other_path->result(), http::status::unauthorized);
  auto other_method =
      Request(*server, "GET", path, nullptr,
              header(SignPeerToken(key_, ScopeAt(*server, "HEAD", path), now + 1min)));
  ASSERT_TRUE(other_method);
  EXPECT_EQ(other_method->result(), http::status::unauthorized);

  // Signed with another key; and a token that claims to live for a day.
  const PeerTokenKey stranger = testing::MakeKey('x');
  auto wrong_key = Request(*server, "GET", path, &stranger);
  ASSERT_TRUE(wrong_key);
  EXPECT_EQ(wrong_key->result(), http::status::unauthorized);
  auto too_long = Request(*server, "GET", path, &key_, {}, std::chrono::hours(24));
  ASSERT_TRUE(too_long);
  EXPECT_EQ(too_long->result(), http::status::unauthorized);

  // An unauthenticated client learns nothing about digests: unknown ones are 401 too.
  auto probe = Request(*server, "GET", PeerBlobPath(core::Sha256Of("absent")), nullptr);
  ASSERT_TRUE(probe);
  EXPECT_EQ(probe->result(), http::status::unauthorized);

  auto good = Request(*server, "GET", path, &key_);
  ASSERT_TRUE(good);
  EXPECT_EQ(good->result(), http::status::ok);
  EXPECT_EQ(good->body(), blob.bytes);
}

TEST_F(PeerServerTest, ATokenCapturedAtOnePeerIsRefusedAtAnother) {
  const testing::TestBlob blob = cache_.AddBlob(300'000);
  // Two peers with the same key, as all nodes of a cluster have it: on distinct addresses where
  // this machine routes 127.0.0.2, on distinct ports in any case.
  PeerServerOptions options_b = testing::PeerCache::PlainTokenOptions();
  options_b.address = CanBind("127.0.0.2") ? "127.0.0.2" : "127.0.0.1";
  auto a = cache_.StartServer(testing::PeerCache::PlainTokenOptions());
  auto b = cache_.StartServer(std::move(options_b));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->endpoint(), "127.0.0.1:" + std::to_string(a->port()));
  ASSERT_NE(a->endpoint(), b->endpoint());

  core::ClientOptions client_options;
  client_options.retry.max_attempts = 1;
  auto client = core::HttpClient::Create(std::move(client_options));
  ASSERT_TRUE(client);
  const std::string path = PeerBlobPath(blob.digest);
  const auto fetch = [&](const PeerServer& server, const std::string& authorization) {
    core::ClientRequest request;
    request.url = "http://" + server.endpoint() + path;
    request.headers.set(http::field::authorization, authorization);
    return (*client)->Fetch(request);
  };

  // What a client of A sends (PeerRangeSource signs just this), captured on the way.
  const std::string captured =
      SignPeerToken(key_, ScopeAt(*a, "GET", path), std::chrono::system_clock::now() + 1min);
  auto at_a = fetch(*a, captured);
  ASSERT_TRUE(at_a) << at_a.error().ToString();
  EXPECT_EQ(at_a->body, blob.bytes);

  auto replayed = fetch(*b, captured);
  ASSERT_FALSE(replayed);
  EXPECT_EQ(replayed.error().code(), core::ErrorCode::kUnauthenticated);
  const std::string reason =
      "is for peer " + a->endpoint() + ", not this peer (" + b->endpoint() + ")";
  EXPECT_NE(replayed.error().message().find("HTTP 401"), std::string::npos)
      << replayed.error().ToString();
  EXPECT_NE(replayed.error().message().find(reason), std::string::npos)
      << replayed.error().ToString();
  EXPECT_NE(cache_.log().find("peer_request_refused"), std::string::npos) << cache_.log();
  EXPECT_NE(cache_.log().find(reason), std::string::npos) << cache_.log();

  // A fresh token for B, from the real client that dials B, works.
  PeerRangeSourceOptions source_options{.endpoint = b->endpoint(), .token_key = key_};
  auto source = PeerRangeSource::Create(std::move(source_options), cache_.clock());
  ASSERT_TRUE(source) << source.error().ToString();
  std::string read(blob.bytes.size(), '\0');
  auto from_b = (*source)->ReadRange(
      SourceFile{.path = "model.bin", .sha256 = blob.digest, .size = blob.bytes.size()}, 0,
      std::as_writable_bytes(std::span(read)), {});
  ASSERT_TRUE(from_b) << from_b.error().ToString();
  EXPECT_EQ(read, blob.bytes);
}

TEST_F(PeerServerTest, AcceptsTokensForItsAdvertisedEndpointOnly) {
  const testing::TestBlob blob = cache_.AddBlob(1000);
  PeerServerOptions options = testing::PeerCache::PlainTokenOptions();
  options.advertise_address = "10.1.2.3";  // what peers dial, e.g. through the pod network
  auto server = cache_.StartServer(std::move(options));
  ASSERT_TRUE(server);
  EXPECT_EQ(server->endpoint(), "10.1.2.3:" + std::to_string(server->port()));
  const std::string path = PeerBlobPath(blob.digest);
  const auto now = std::chrono::system_clock::now();
  const auto header = [](const std::string& value) { return "Authorization: " + value + "\r\n"; };

  // Signed for the address it listens on, not the one it advertises.
  const std::string listen_endpoint = "127.0.0.1:" + std::to_string(server->port());
  auto listen_address =
      Request(*server, "GET", path, nullptr,
              header(SignPeerToken(
                  key_, {.audience = listen_endpoint, .method = "GET", .path = path}, now + 1min)));
  ASSERT_TRUE(listen_address);
  EXPECT_EQ(listen_address->result(), http::status::unauthorized);
  EXPECT_NE(listen_address->body().find("not this peer (" + server->endpoint() + ")"),
            std::string::npos)
      << listen_address->body();
  auto advertised = Request(*server, "GET", path, &key_);
  ASSERT_TRUE(advertised);
  EXPECT_EQ(advertised->result(), http::status::ok);

  // A wildcard with nothing advertised: no client can sign for it, and the log says so.
  PeerServerOptions wildcard = testing::PeerCache::PlainTokenOptions();
  wildcard.address = "0.0.0.0";
  EXPECT_TRUE(cache_.StartServer(std::move(wildcard)));
  EXPECT_NE(cache_.log().find("peer_endpoint_unroutable"), std::string::npos) << cache_.log();
}

TEST_F(PeerServerTest, UnknownDigestIs404MalformedIs400BadRangeIs416) {
  const testing::TestBlob blob = cache_.AddBlob(1000);
  auto server = cache_.StartServer(testing::PeerCache::PlainTokenOptions());
  ASSERT_TRUE(server);

  auto unknown = Request(*server, "GET", PeerBlobPath(core::Sha256Of("not in the cache")), &key_);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->result(), http::status::not_found);

  const std::string hex = core::ToHex(blob.digest);
  std::string upper = hex;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string& bad :
       {std::string("/v1/blobs/") + hex, "/v1/blobs/sha256:" + hex.substr(1),
        "/v1/blobs/sha256:" + upper, "/v1/blobs/sha512:" + hex, std::string("/v1/blobs/"),
        "/v1/blobs/sha256:" + hex + "/x"}) {
    auto answer = Request(*server, "GET", bad, &key_);
    ASSERT_TRUE(answer) << bad;
    EXPECT_EQ(answer->result(), http::status::bad_request) << bad;
  }

  auto beyond = Request(*server, "GET", PeerBlobPath(blob.digest), &key_, "Range: bytes=1000-\r\n");
  ASSERT_TRUE(beyond);
  EXPECT_EQ(beyond->result(), http::status::range_not_satisfiable);
  EXPECT_EQ(beyond->at(http::field::content_range), "bytes */1000");
  EXPECT_EQ(server->streams_in_flight(), 0u);
}

TEST_F(PeerServerTest, BlobsOutsideTheCatalogAreNotFound) {
  const testing::TestBlob blob = cache_.AddBlob(1000);
  const testing::TestBlob elsewhere = cache_.AddBlob(1000, 9);
  // A symlink in blobs/ is not something the store makes: the catalog does not find it.
  const auto link = cache_.blobs_directory() / core::ToHex(elsewhere.digest);
  std::filesystem::rename(link, cache_.directory() + "/outside");
  std::filesystem::create_symlink(cache_.directory() + "/outside", link);
  auto server = cache_.StartServer(testing::PeerCache::PlainTokenOptions());
  ASSERT_TRUE(server);
  auto linked = Request(*server, "GET", PeerBlobPath(elsewhere.digest), &key_);
  ASSERT_TRUE(linked);
  EXPECT_EQ(linked->result(), http::status::not_found);
  auto regular = Request(*server, "GET", PeerBlobPath(blob.digest), &key_);
  ASSERT_TRUE(regular);
  EXPECT_EQ(regular->result(), http::status::ok);
}

TEST_F(PeerServerTest, BandwidthCapHolds) {
  const testing::TestBlob blob = cache_.AddBlob(8 * 1024 * 1024);
  PeerServerOptions options = testing::PeerCache::PlainTokenOptions();
  options.max_upload_bytes_per_second = 16 * 1024 * 1024;
  auto server = cache_.StartServer(std::move(options));
  ASSERT_TRUE(server);
  const auto start = std::chrono::steady_clock::now();
  auto whole = Request(*server, "GET", PeerBlobPath(blob.digest), &key_);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(whole) << whole.error().ToString();
  EXPECT_EQ(whole->body(), blob.bytes);
  // 8 MiB at 16 MiB/s is 0.5 s, less the 20 ms burst; only a lower bound is a fair assertion.
  EXPECT_GE(elapsed, 420ms);
  const std::string metrics = cache_.metrics().ExposeText();
  EXPECT_EQ(metrics.find("modelplane_peer_throttled_seconds_total 0\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("modelplane_peer_bytes_served_total 8388608"), std::string::npos)
      << metrics;
}

TEST_F(PeerServerTest, ReadersAreServedToCompletionAndOthersWait) {
  const testing::TestBlob blob = cache_.AddBlob(4 * 1024 * 1024);
  PeerServerOptions options = testing::PeerCache::PlainTokenOptions();
  options.max_upload_bytes_per_second = 1024 * 1024;  // the first reader's body lasts ~4 s
  options.max_readers = 1;
  options.stop_grace = 100ms;
  auto server = cache_.StartServer(std::move(options));
  ASSERT_TRUE(server);
  const std::string path = PeerBlobPath(blob.digest);
  const auto signed_request = [&] {
    const std::string token =
        SignPeerToken(key_, ScopeAt(*server, "GET", path), std::chrono::system_clock::now() + 1min);
    return MakeRawRequest("GET", path, "Range: bytes=0-1023\r\nAuthorization: " + token + "\r\n");
  };

  // Reader 127.0.0.1 holds the one place with a slow body.
  auto first = TestConnection::Open(server->port());
  ASSERT_TRUE(first);
  const std::string token =
      SignPeerToken(key_, ScopeAt(*server, "GET", path), std::chrono::system_clock::now() + 1min);
  ASSERT_TRUE((*first)->Send(MakeRawRequest("GET", path, "Authorization: " + token + "\r\n")));
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (server->streams_in_flight() == 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(server->streams_in_flight(), 1u);

  // The same reader gets another stream; a reader from 127.0.0.2 is turned away, told when to
  // ask again.
  auto same = TestConnection::Open(server->port(), 10s);
  ASSERT_TRUE(same);
  auto again = (*same)->RoundTrip(signed_request());
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again->result(), http::status::partial_content);
  auto other = TestConnection::Open(server->port(), 10s, 0x7f000002);
  ASSERT_TRUE(other) << other.error().ToString();
  auto refused = (*other)->RoundTrip(signed_request());
  ASSERT_TRUE(refused) << refused.error().ToString();
  EXPECT_EQ(refused->result(), http::status::service_unavailable);
  EXPECT_EQ(refused->at(http::field::retry_after), "1");
  EXPECT_NE(refused->body().find("reader limit reached"), std::string::npos);
  server->Stop();
}

TEST_F(PeerServerTest, StreamCapAnswers503WithRetryAfter) {
  const testing::TestBlob blob = cache_.AddBlob(4 * 1024 * 1024);
  PeerServerOptions options = testing::PeerCache::PlainTokenOptions();
  options.max_upload_bytes_per_second = 1024 * 1024;  // the first stream lasts ~4 s
  options.max_streams = 1;
  options.stop_grace = 100ms;
  auto server = cache_.StartServer(std::move(options));
  ASSERT_TRUE(server);
  const std::string path = PeerBlobPath(blob.digest);

  auto slow = TestConnection::Open(server->port());
  ASSERT_TRUE(slow);
  const std::string token =
      SignPeerToken(key_, ScopeAt(*server, "GET", path), std::chrono::system_clock::now() + 1min);
  ASSERT_TRUE((*slow)->Send(MakeRawRequest("GET", path, "Authorization: " + token + "\r\n")));
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (server->streams_in_flight() == 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(server->streams_in_flight(), 1u);

  auto refused = Request(*server, "GET", path, &key_);
  ASSERT_TRUE(refused) << refused.error().ToString();
  EXPECT_EQ(refused->result(), http::status::service_unavailable);
  EXPECT_EQ(refused->at(http::field::retry_after), "1");
  // HEAD costs no stream.
  auto head = Request(*server, "HEAD", path, &key_);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->result(), http::status::ok);

  // Stop cuts the slow stream at its grace: the client sees the connection end early.
  const auto stop_start = std::chrono::steady_clock::now();
  server->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - stop_start, 3s);
  EXPECT_EQ(server->streams_in_flight(), 0u);
  // Destroyed, the server has surely closed the socket (a close that Stop() posted may not have
  // run before its io threads ended).
  server.reset();
  auto cut = (*slow)->ReadResponse();
  EXPECT_FALSE(cut && cut->body().size() == blob.bytes.size());
}

TEST_F(PeerServerTest, StopWaitsForAStreamInFlight) {
  const testing::TestBlob blob = cache_.AddBlob(1024 * 1024);
  PeerServerOptions options = testing::PeerCache::PlainTokenOptions();
  options.max_upload_bytes_per_second = 2 * 1024 * 1024;  // ~0.5 s for the blob
  options.stop_grace = 10s;
  auto server = cache_.StartServer(std::move(options));
  ASSERT_TRUE(server);
  const std::string path = PeerBlobPath(blob.digest);

  core::Result<TestResponse> received =
      std::unexpected(core::Error(core::ErrorCode::kInternal, ""));
  std::thread client([&] { received = Request(*server, "GET", path, &key_); });
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (server->streams_in_flight() == 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(2ms);
  }
  ASSERT_EQ(server->streams_in_flight(), 1u);
  server->Stop();
  EXPECT_EQ(server->streams_in_flight(), 0u);
  client.join();
  ASSERT_TRUE(received) << received.error().ToString();
  EXPECT_EQ(received->result(), http::status::ok);
  EXPECT_EQ(received->body(), blob.bytes);

  // Stopped: nothing is accepted any more.
  auto after = TestConnection::Open(server->port(), 1s);
  EXPECT_TRUE(!after || !(*after)->RoundTrip(MakeRawRequest("GET", path)));
}

TEST_F(PeerServerTest, MutualTlsAcceptsTheClusterCaOnly) {
  const testing::TestBlob blob = cache_.AddBlob(200'000);
  auto server = cache_.StartServer(cache_.MutualTlsOptions());
  ASSERT_TRUE(server);
  const core::testing::TestPki& pki = cache_.pki();

  // A client certificate from an unrelated CA (its own key pair, not just another CA file).
  auto other_ca = core::testing::TestCertificateAuthority::Create("intruder-ca");
  ASSERT_TRUE(other_ca);
  auto intruder = other_ca->Issue("intruder");
  ASSERT_TRUE(intruder);
  const std::string intruder_certificate = cache_.directory() + "/intruder.crt";
  const std::string intruder_key = cache_.directory() + "/intruder.key";
  std::ofstream(intruder_certificate) << intruder->certificate_pem;
  std::ofstream(intruder_key) << intruder->private_key_pem;

  const auto fetch = [&](std::string certificate, std::string key) {
    core::ClientOptions options;
    options.tls = core::TlsClientOptions{.ca_file = pki.ca_file,
                                         .certificate_chain_file = std::move(certificate),
                                         .private_key_file = std::move(key)};
    options.retry.max_attempts = 1;
    auto client = core::HttpClient::Create(std::move(options));
    EXPECT_TRUE(client);
    core::ClientRequest request;
    request.url = "https://127.0.0.1:" + std::to_string(server->port()) + PeerBlobPath(blob.digest);
    return (*client)->Fetch(request);
  };

  auto member = fetch(pki.client_certificate_file, pki.client_key_file);
  ASSERT_TRUE(member) << member.error().ToString();
  EXPECT_EQ(member->status, 200u);
  EXPECT_EQ(member->body, blob.bytes);

  auto anonymous = fetch("", "");
  ASSERT_FALSE(anonymous);
  EXPECT_EQ(anonymous.error().code(), core::ErrorCode::kUnauthenticated);
  EXPECT_NE(anonymous.error().message().find("HTTP 401"), std::string::npos)
      << anonymous.error().ToString();

  auto foreign = fetch(intruder_certificate, intruder_key);
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().code(), core::ErrorCode::kUnauthenticated);
  EXPECT_NE(foreign.error().message().find("HTTP 401"), std::string::npos)
      << foreign.error().ToString();
}

TEST_F(PeerServerTest, TlsWithoutClientCaRequiresTokens) {
  const testing::TestBlob blob = cache_.AddBlob(70'000);
  PeerServerOptions options = cache_.MutualTlsOptions();
  options.tls->client_ca_file.clear();
  options.token_key = key_;
  auto server = cache_.StartServer(std::move(options));
  ASSERT_TRUE(server);
  core::ClientOptions client_options;
  client_options.tls = core::TlsClientOptions{.ca_file = cache_.pki().ca_file};
  client_options.retry.max_attempts = 1;
  auto client = core::HttpClient::Create(std::move(client_options));
  ASSERT_TRUE(client);
  const std::string path = PeerBlobPath(blob.digest);
  core::ClientRequest request;
  request.url = "https://127.0.0.1:" + std::to_string(server->port()) + path;

  auto anonymous = (*client)->Fetch(request);
  ASSERT_FALSE(anonymous);
  EXPECT_EQ(anonymous.error().code(), core::ErrorCode::kUnauthenticated);

  request.headers.set(
      http::field::authorization,
      SignPeerToken(key_, ScopeAt(*server, "GET", path), std::chrono::system_clock::now() + 1min));
  auto signed_request = (*client)->Fetch(request);
  ASSERT_TRUE(signed_request) << signed_request.error().ToString();
  EXPECT_EQ(signed_request->body, blob.bytes);
}

TEST_F(PeerServerTest, RefusesConfigurationsWithoutSafeAuthentication) {
  core::MetricsRegistry metrics;
  core::SystemClock clock;
  PeerServerOptions plain;
  plain.token_key = key_;  // plain HTTP not explicitly allowed
  EXPECT_FALSE(PeerServer::Create(plain, cache_.catalog(), metrics, cache_.logger(), clock));
  PeerServerOptions no_credentials = cache_.MutualTlsOptions();
  no_credentials.tls->client_ca_file.clear();
  EXPECT_FALSE(
      PeerServer::Create(no_credentials, cache_.catalog(), metrics, cache_.logger(), clock));
  PeerServerOptions no_streams = testing::PeerCache::PlainTokenOptions();
  no_streams.max_streams = 0;
  EXPECT_FALSE(PeerServer::Create(no_streams, cache_.catalog(), metrics, cache_.logger(), clock));
}

TEST_F(PeerServerTest, PlainHttpSaysSoInTheLog) {
  {
    auto server = cache_.StartServer(testing::PeerCache::PlainTokenOptions());
    ASSERT_TRUE(server);
  }
  EXPECT_NE(cache_.log().find("insecure_plain_http_enabled"), std::string::npos) << cache_.log();
}

}  // namespace
}  // namespace modelplane::agent
