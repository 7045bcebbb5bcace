#include "core/http/http_client.h"

#include <atomic>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>

#include <gtest/gtest.h>

#include "core/digest/sha256.h"
#include "core/http/http_server.h"
#include "core/http/http_status_error.h"

namespace modelplane::core {
namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;

// A deterministic body of any size, generated on demand so neither side holds it whole.
class PatternSource final : public BodySource {
 public:
  explicit PatternSource(std::uint64_t size) : size_(size) {}
  static char ByteAt(std::uint64_t offset) {
    return static_cast<char>((offset * 131 + (offset >> 12)) % 251);
  }
  std::uint64_t Size() const override { return size_; }
  Result<std::size_t> ReadAt(std::uint64_t offset, std::span<std::byte> out) override {
    const auto count =
        static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), size_ - offset));
    for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<std::byte>(ByteAt(offset + i));
    return count;
  }

 private:
  std::uint64_t size_;
};

std::string Pattern(std::uint64_t first, std::uint64_t length) {
  std::string text(length, '\0');
  for (std::uint64_t i = 0; i < length; ++i) text[i] = PatternSource::ByteAt(first + i);
  return text;
}

long MaxRssKib() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

class HttpClientTest : public ::testing::Test {
 protected:
  void StartServer(ServerOptions options = {}) {
    options.threads = 2;
    options.stop_grace = 5s;
    auto server = HttpServer::Create(std::move(options), std::move(router_));
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
  }

  std::unique_ptr<HttpClient> MakeClient(ClientOptions options = {}) {
    options.retry.initial_backoff = 1ms;
    options.retry.max_backoff = 10ms;
    auto client = HttpClient::Create(std::move(options));
    EXPECT_TRUE(client) << client.error().ToString();
    return client ? std::move(*client) : nullptr;
  }

  std::string Url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(server_->port()) + std::string(path);
  }

  ClientRequest Get(std::string_view path) const {
    ClientRequest request;
    request.url = Url(path);
    return request;
  }

  Router router_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpClientTest, KeepAliveReusesOneConnection) {
  router_.Handle(http::verb::get, "/hello", [](const ServerRequest&) {
    return ServerResponse::Text(http::status::ok, "hello");
  });
  StartServer();
  auto client = MakeClient();
  for (int i = 0; i < 20; ++i) {
    auto response = client->Fetch(Get("/hello"));
    ASSERT_TRUE(response) << response.error().ToString();
    EXPECT_EQ(response->status, 200U);
    EXPECT_EQ(response->body, "hello");
  }
  EXPECT_EQ(server_->stats().accepted_connections, 1U);
  EXPECT_EQ(server_->stats().requests, 20U);
  EXPECT_EQ(client->stats().connections_opened, 1U);
}

// DNS rebinding: an allowed name that resolves to loopback. With an address policy that does
// not name loopback the client connects nowhere (the listener accepts nothing) and does not
// retry; naming 127.0.0.0/8 lets the same request through.
TEST_F(HttpClientTest, AnAddressPolicyRefusesLoopbackBeforeAnythingIsSent) {
  router_.Handle(http::verb::get, "/hello", [](const ServerRequest&) {
    return ServerResponse::Text(http::status::ok, "hello");
  });
  StartServer();
  const std::string by_name = "http://localhost:" + std::to_string(server_->port()) + "/hello";
  ClientOptions options;
  options.retry.max_attempts = 3;
  options.address_policy = AddressPolicy{};
  auto refusing = MakeClient(options);
  for (const std::string& url : {by_name, Url("/hello")}) {
    auto refused = refusing->Fetch({.url = url});
    ASSERT_FALSE(refused) << url;
    EXPECT_EQ(refused.error().code(), ErrorCode::kAddressDenied) << refused.error().ToString();
    EXPECT_FALSE(refused.error().retryable());
    EXPECT_NE(refused.error().message().find("127.0.0.1"), std::string::npos)
        << refused.error().message();
  }
  EXPECT_EQ(refusing->stats().retries, 0U);
  EXPECT_EQ(refusing->stats().connections_opened, 0U);
  EXPECT_EQ(server_->stats().accepted_connections, 0U);

  options.address_policy = AddressPolicy{.allowed = {*AddressRange::Parse("127.0.0.0/8")}};
  auto allowing = MakeClient(options);
  auto response = allowing->Fetch({.url = by_name});
  ASSERT_TRUE(response) << response.error().ToString();
  EXPECT_EQ(response->body, "hello");
  EXPECT_EQ(server_->stats().accepted_connections, 1U);

  options.address_policy = AddressPolicy{.allowed = {*AddressRange::Parse("::1/128")}};
  auto other_loopback = MakeClient(options);
  auto still_refused = other_loopback->Fetch({.url = Url("/hello")});
  ASSERT_FALSE(still_refused);
  EXPECT_EQ(still_refused.error().code(), ErrorCode::kAddressDenied);
  EXPECT_EQ(server_->stats().accepted_connections, 1U);
}

TEST_F(HttpClientTest, ConcurrentCallersShareABoundedPool) {
  router_.Handle(http::verb::get, "/hello", [](const ServerRequest&) {
    return ServerResponse::Text(http::status::ok, "hello");
  });
  StartServer();
  ClientOptions options;
  options.max_connections_per_origin = 3;
  auto client = MakeClient(options);
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  threads.reserve(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) ok += client->Fetch(Get("/hello")).has_value();
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(ok.load(), 200);
  EXPECT_LE(server_->stats().accepted_connections, 3U);
}

TEST_F(HttpClientTest, RangeRequestsGetTheRightBytes) {
  router_.Handle(http::verb::get, "/blob", [](const ServerRequest&) {
    return ServerResponse::Stream(std::make_unique<PatternSource>(100'000));
  });
  router_.Handle(http::verb::get, "/plain", [](const ServerRequest&) {
    return ServerResponse::Text(http::status::ok, "ignores ranges");
  });
  StartServer();
  auto client = MakeClient();
  ClientRequest request = Get("/blob");
  request.range_first = 1000;
  request.range_last = 1999;
  auto middle = client->Fetch(request);
  ASSERT_TRUE(middle) << middle.error().ToString();
  EXPECT_EQ(middle->status, 206U);
  EXPECT_EQ(middle->body, Pattern(1000, 1000));

  request.range_first = 99'990;
  request.range_last.reset();
  auto tail = client->Fetch(request);
  ASSERT_TRUE(tail);
  EXPECT_EQ(tail->body, Pattern(99'990, 10));

  request.range_first = 200'000;
  auto beyond = client->Fetch(request);
  ASSERT_FALSE(beyond);
  EXPECT_EQ(beyond.error().code(), ErrorCode::kInvalidArgument);  // 416

  ClientRequest ignored = Get("/plain");
  ignored.range_first = 5;
  auto wrong = client->Fetch(ignored);
  ASSERT_FALSE(wrong);  // a 200 to a Range request would be the wrong bytes
  EXPECT_FALSE(wrong.error().retryable());
}

TEST_F(HttpClientTest, StreamsALargeBodyWithBoundedMemory) {
  static constexpr std::uint64_t kSize = 64ULL << 20;
  router_.Handle(http::verb::get, "/large", [](const ServerRequest&) {
    return ServerResponse::Stream(std::make_unique<PatternSource>(kSize));
  });
  StartServer();
  ClientOptions options;
  options.stream_buffer_size = 256 * 1024;
  auto client = MakeClient(options);

  auto expected_hasher = Sha256::Create();
  ASSERT_TRUE(expected_hasher);
  for (std::uint64_t offset = 0; offset < kSize; offset += 1 << 20) {
    expected_hasher->Update(Pattern(offset, 1 << 20));
  }
  const Sha256Bytes expected = expected_hasher->Finish();

  auto hasher = Sha256::Create();
  ASSERT_TRUE(hasher);
  std::size_t largest_piece = 0;
  const long rss_before = MaxRssKib();
  auto response = client->FetchStream(Get("/large"), [&](std::span<const std::byte> data) {
    largest_piece = std::max(largest_piece, data.size());
    hasher->Update(data);
    return Ok();
  });
  const long rss_growth_kib = MaxRssKib() - rss_before;
  ASSERT_TRUE(response) << response.error().ToString();
  EXPECT_EQ(response->bytes_delivered, kSize);
  EXPECT_EQ(hasher->Finish(), expected);
  EXPECT_LE(largest_piece, options.stream_buffer_size);
  EXPECT_LT(rss_growth_kib, 32 * 1024) << "the body was buffered somewhere";
}

TEST_F(HttpClientTest, ReadsABodyStraightIntoLentMemory) {
  static constexpr std::uint64_t kSize = 3ULL << 20;
  router_.Handle(http::verb::get, "/lent", [](const ServerRequest&) {
    return ServerResponse::Stream(std::make_unique<PatternSource>(kSize));
  });
  // A small body the server writes together with its head, so it arrives with it.
  router_.Handle(http::verb::get, "/inline", [](const ServerRequest&) {
    return ServerResponse::Text(http::status::ok, Pattern(0, 3000));
  });
  StartServer();
  auto client = MakeClient();
  const std::string expected = Pattern(0, kSize);

  // All of it fits: every piece the sink sees lies in the lent memory, in order.
  std::vector<std::byte> landing(kSize);
  std::size_t filled = 0;
  bool outside = false;
  auto response = client->FetchStream(
      Get("/lent"),
      [&](std::span<const std::byte> data) {
        outside = outside || data.data() != landing.data() + filled;
        filled += data.size();
        return Ok();
      },
      landing);
  ASSERT_TRUE(response) << response.error().ToString();
  EXPECT_EQ(response->bytes_delivered, kSize);
  EXPECT_FALSE(outside);
  EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(landing.data()), kSize), expected);

  // What the sink received, for a fetch of `path` with `lent` as the landing span.
  auto received = [&](const char* path, std::span<std::byte> lent) {
    std::string bytes;
    auto fetched = client->FetchStream(
        Get(path),
        [&](std::span<const std::byte> data) {
          bytes.append(reinterpret_cast<const char*>(data.data()), data.size());
          return Ok();
        },
        lent);
    EXPECT_TRUE(fetched) << fetched.error().ToString();
    return bytes;
  };
  // Lent memory shorter than the body: the rest arrives through the client's own buffer.
  std::vector<std::byte> short_landing(kSize / 3);
  EXPECT_EQ(received("/lent", short_landing), expected);
  // Lent memory smaller than what arrived with the response head: still in order.
  std::vector<std::byte> tiny_landing(100);
  EXPECT_EQ(received("/inline", tiny_landing), Pattern(0, 3000));
}

TEST_F(HttpClientTest, RetriesOn503ThenSucceeds) {
  std::atomic<int> calls{0};
  router_.Handle(http::verb::get, "/flaky", [&](const ServerRequest&) {
    const int call = ++calls;
    if (call == 1) return ServerResponse::Text(http::status::service_unavailable, "busy");
    if (call == 2) {
      auto response = ServerResponse::Text(http::status::too_many_requests, "slow down");
      response.headers.set(http::field::retry_after, "0");
      return response;
    }
    return ServerResponse::Text(http::status::ok, "finally");
  });
  StartServer();
  auto client = MakeClient();
  auto response = client->Fetch(Get("/flaky"));
  ASSERT_TRUE(response) << response.error().ToString();
  EXPECT_EQ(response->body, "finally");
  EXPECT_EQ(calls.load(), 3);
  EXPECT_EQ(client->stats().retries, 2U);
  // Error bodies were read, so the connection stayed usable.
  EXPECT_EQ(server_->stats().accepted_connections, 1U);
}

TEST_F(HttpClientTest, GivesUpAfterMaxAttemptsAndNeverRetries4xx) {
  std::atomic<int> unavailable_calls{0};
  std::atomic<int> missing_calls{0};
  router_.Handle(http::verb::get, "/down", [&](const ServerRequest&) {
    ++unavailable_calls;
    return ServerResponse::Text(http::status::bad_gateway, "down");
  });
  router_.HandlePrefix(http::verb::get, "/status/", [&](const ServerRequest& request) {
    ++missing_calls;
    const auto status = static_cast<unsigned>(std::stoul(request.path.substr(8)));
    return ServerResponse::Text(static_cast<http::status>(status), "no");
  });
  StartServer();
  ClientOptions options;
  options.retry.max_attempts = 3;
  auto client = MakeClient(options);

  auto down = client->Fetch(Get("/down"));
  ASSERT_FALSE(down);
  EXPECT_EQ(down.error().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(unavailable_calls.load(), 3);

  const std::vector<std::pair<unsigned, ErrorCode>> cases = {
      {404, ErrorCode::kNotFound},        {403, ErrorCode::kPermissionDenied},
      {401, ErrorCode::kUnauthenticated}, {400, ErrorCode::kInvalidArgument},
      {500, ErrorCode::kUnavailable},
  };
  for (const auto& [status, code] : cases) {
    missing_calls = 0;
    auto response = client->Fetch(Get("/status/" + std::to_string(status)));
    ASSERT_FALSE(response);
    EXPECT_EQ(response.error().code(), code) << status;
    EXPECT_FALSE(response.error().retryable()) << status;
    EXPECT_EQ(missing_calls.load(), 1) << status;
  }
}

// A caller told to stop while the server throttles it is not held for the Retry-After.
TEST_F(HttpClientTest, ACancelEndsTheWaitForRetryAfterAtOnce) {
  std::atomic<int> calls{0};
  router_.Handle(http::verb::get, "/throttled", [&](const ServerRequest&) {
    ++calls;
    auto response = ServerResponse::Text(http::status::too_many_requests, "slow down");
    response.headers.set(http::field::retry_after, "25");
    return response;
  });
  StartServer();
  auto client = MakeClient();
  CancellationToken cancel;
  ClientRequest request = Get("/throttled");
  request.cancel = &cancel;
  auto pending = std::async(std::launch::async, [&] { return client->Fetch(request); });
  while (calls.load() == 0) std::this_thread::yield();
  const auto cancelled_at = std::chrono::steady_clock::now();
  cancel.Cancel();
  auto response = pending.get();
  const auto took = std::chrono::steady_clock::now() - cancelled_at;
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().code(), ErrorCode::kCancelled) << response.error().ToString();
  EXPECT_NE(response.error().message().find("429"), std::string::npos)
      << "says what it was waiting out: " << response.error().message();
  EXPECT_LT(took, 1s) << "waited out the Retry-After instead of stopping";
  EXPECT_EQ(calls.load(), 1);
}

// The waits between attempts are on the request's clock: Retry-After: 25 is 25 s of it.
TEST_F(HttpClientTest, RetryAfterIsWaitedOnTheRequestsClock) {
  std::atomic<int> calls{0};
  router_.Handle(http::verb::get, "/once", [&](const ServerRequest&) {
    if (++calls == 1) {
      auto response = ServerResponse::Text(http::status::too_many_requests, "slow down");
      response.headers.set(http::field::retry_after, "25");
      return response;
    }
    return ServerResponse::Text(http::status::ok, "done");
  });
  StartServer();
  auto client = MakeClient();
  ManualClock clock;
  ClientRequest request = Get("/once");
  request.clock = &clock;
  auto pending = std::async(std::launch::async, [&] { return client->Fetch(request); });
  while (clock.waiting() == 0) std::this_thread::yield();
  clock.Advance(24s);
  const std::uint64_t waits = clock.waits_ended();
  while (clock.waits_ended() < waits + 2) std::this_thread::yield();
  EXPECT_EQ(calls.load(), 1) << "retried before 25 s of the clock had passed";
  clock.Advance(1s);
  auto response = pending.get();
  ASSERT_TRUE(response) << response.error().ToString();
  EXPECT_EQ(response->body, "done");
  EXPECT_EQ(calls.load(), 2);
}

TEST_F(HttpClientTest, ReplacesAPooledConnectionTheServerClosedWhileIdle) {
  router_.Handle(http::verb::get, "/hello", [](const ServerRequest&) {
    return ServerResponse::Text(http::status::ok, "hello");
  });
  ServerOptions options;
  options.idle_timeout = 100ms;
  StartServer(options);
  ClientOptions client_options;
  client_options.retry.max_attempts = 1;  // the replacement must not need a retry
  auto client = MakeClient(client_options);
  ASSERT_TRUE(client->Fetch(Get("/hello")));
  // Wait until the server has closed its side (bounded).
  for (int i = 0; i < 200 && server_->stats().open_connections > 0; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(server_->stats().open_connections, 0U);
  auto response = client->Fetch(Get("/hello"));
  ASSERT_TRUE(response) << response.error().ToString();
  EXPECT_EQ(response->body, "hello");
  EXPECT_EQ(server_->stats().accepted_connections, 2U);
  EXPECT_EQ(client->stats().stale_discarded, 1U);
}

// Serves one chunk, then stalls until released.
class StallingSource final : public BodySource {
 public:
  explicit StallingSource(std::shared_future<void> release) : release_(std::move(release)) {}
  std::uint64_t Size() const override { return 4 << 20; }
  Result<std::size_t> ReadAt(std::uint64_t offset, std::span<std::byte> out) override {
    if (offset > 0) release_.wait_for(10s);
    std::fill(out.begin(), out.end(), std::byte{'s'});
    return out.size();
  }

 private:
  std::shared_future<void> release_;
};

TEST_F(HttpClientTest, ReadDeadlineCatchesAStalledBody) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  router_.Handle(http::verb::get, "/stall", [released](const ServerRequest&) {
    return ServerResponse::Stream(std::make_unique<StallingSource>(released));
  });
  ServerOptions options;
  options.stream_chunk_size = 64 * 1024;
  StartServer(options);
  auto client = MakeClient();
  ClientRequest request = Get("/stall");
  request.read_timeout = 300ms;
  std::uint64_t received = 0;
  auto response = client->FetchStream(request, [&](std::span<const std::byte> data) {
    received += data.size();
    return Ok();
  });
  release.set_value();
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().code(), ErrorCode::kDeadlineExceeded);
  EXPECT_EQ(received, 64U * 1024);  // the first chunk arrived, so no silent retry
  EXPECT_NE(response.error().message().find("went to the sink"), std::string::npos);
  EXPECT_EQ(client->stats().retries, 0U);
}

TEST_F(HttpClientTest, ConnectFailuresAreRetriedThenUnavailable) {
  StartServer();
  const std::uint16_t port = server_->port();
  server_->Stop();
  ClientOptions options;
  options.retry.max_attempts = 2;
  auto client = MakeClient(options);
  ClientRequest request;
  request.url = "http://127.0.0.1:" + std::to_string(port) + "/";
  auto response = client->Fetch(request);
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(client->stats().retries, 1U);
}

TEST(UrlTest, ParsesWhatTheClientNeeds) {
  auto plain = Url::Parse("http://example.com/a/b?c=d#frag");
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->tls);
  EXPECT_EQ(plain->host, "example.com");
  EXPECT_EQ(plain->port, 80);
  EXPECT_EQ(plain->target, "/a/b?c=d");
  EXPECT_EQ(plain->HostHeader(), "example.com");
  auto v6 = Url::Parse("https://[::1]:8443");
  ASSERT_TRUE(v6);
  EXPECT_TRUE(v6->tls);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 8443);
  EXPECT_EQ(v6->target, "/");
  EXPECT_EQ(v6->HostHeader(), "[::1]:8443");
  EXPECT_EQ(v6->Origin(), "https://[::1]:8443");
  EXPECT_FALSE(Url::Parse("ftp://x/"));
  EXPECT_FALSE(Url::Parse("http://user:pw@x/"));
  EXPECT_FALSE(Url::Parse("http://x:99999/"));
  EXPECT_FALSE(Url::Parse("http:///path"));
}

// The waits themselves are core::ExponentialBackoff's (tests/core/backoff).
TEST(RetryPolicyTest, RetryAfterParsesAndStatusesClassify) {
  EXPECT_EQ(ParseRetryAfter("7"), 7000ms);
  EXPECT_EQ(ParseRateLimitReset("\"resolvers\";r=0;t=39"), 39000ms);
  EXPECT_EQ(ParseRateLimitReset("limit=100, remaining=0, t=4"), 4000ms);
  EXPECT_FALSE(ParseRateLimitReset("\"resolvers\";r=0"));
  EXPECT_FALSE(ParseRateLimitReset("t=soon"));
  EXPECT_FALSE(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"));
  EXPECT_FALSE(ParseRetryAfter("-1"));
  EXPECT_FALSE(ParseRetryAfter("soon"));
  EXPECT_FALSE(ParseRetryAfter("")) << "an empty header is no advice";
  EXPECT_EQ(ParseRetryAfter(" 3 "), 3000ms) << "surrounding spaces are allowed";
  EXPECT_EQ(ParseRetryAfter("86400"), 86'400'000ms);
  EXPECT_FALSE(ParseRetryAfter("86401")) << "over a day is not advice a caller should follow";
  EXPECT_FALSE(ParseRetryAfter("99999999999999999999")) << "overflow is garbage";
  EXPECT_TRUE(IsRetryableHttpStatus(503));
  EXPECT_EQ(HttpStatusError(404, "http://127.0.0.1/x", "").http_status(), 404u);
  EXPECT_FALSE(IsRetryableHttpStatus(404));
}

}  // namespace
}  // namespace modelplane::core
