#include "core/http/http_server.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/core/http/test_certificates.h"
#include "tests/core/http/test_connection.h"

namespace modelplane::core {
namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;
using testing::MakeRawRequest;
using testing::TestConnection;

ServerOptions TestOptions() {
  ServerOptions options;
  options.threads = 2;
  options.stop_grace = 5s;
  return options;
}

std::unique_ptr<HttpServer> StartServer(ServerOptions options, Router router) {
  auto server = HttpServer::Create(std::move(options), std::move(router));
  EXPECT_TRUE(server.has_value()) << server.error().ToString();
  return server ? std::move(*server) : nullptr;
}

std::unique_ptr<TestConnection> Connect(const HttpServer& server) {
  auto connection = TestConnection::Open(server.port());
  EXPECT_TRUE(connection.has_value()) << connection.error().ToString();
  return connection ? std::move(*connection) : nullptr;
}

Router HelloRouter() {
  Router router;
  router.Handle(http::verb::get, "/hello", [](const ServerRequest&) {
    return ServerResponse::Text(http::status::ok, "hello");
  });
  router.HandlePrefix(http::verb::get, "/blobs/", [](const ServerRequest& request) {
    return ServerResponse::Text(http::status::ok, request.path + "|" + request.query);
  });
  router.Handle(http::verb::post, "/echo", [](const ServerRequest& request) {
    return ServerResponse::Text(http::status::ok, request.body);
  });
  router.Handle(http::verb::get, "/throw", [](const ServerRequest&) -> ServerResponse {
    throw std::runtime_error("handler bug");
  });
  return router;
}

TEST(HttpServerTest, RoutesOnOneKeepAliveConnection) {
  auto server = StartServer(TestOptions(), HelloRouter());
  ASSERT_TRUE(server);
  EXPECT_NE(server->port(), 0);
  auto connection = Connect(*server);
  ASSERT_TRUE(connection);

  auto hello = connection->RoundTrip(MakeRawRequest("GET", "/hello"));
  ASSERT_TRUE(hello) << hello.error().ToString();
  EXPECT_EQ(hello->result(), http::status::ok);
  EXPECT_EQ(hello->body(), "hello");

  auto blob = connection->RoundTrip(MakeRawRequest("GET", "/blobs/abc?x=1"));
  ASSERT_TRUE(blob);
  EXPECT_EQ(blob->body(), "/blobs/abc|x=1");

  auto echo = connection->RoundTrip(MakeRawRequest("POST", "/echo", "", "payload"));
  ASSERT_TRUE(echo);
  EXPECT_EQ(echo->body(), "payload");

  auto missing = connection->RoundTrip(MakeRawRequest("GET", "/nope"));
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->result(), http::status::not_found);

  auto wrong_method = connection->RoundTrip(MakeRawRequest("DELETE", "/hello"));
  ASSERT_TRUE(wrong_method);
  EXPECT_EQ(wrong_method->result(), http::status::method_not_allowed);
  EXPECT_EQ(wrong_method->at(http::field::allow), "GET, HEAD");

  auto head = connection->RoundTrip(MakeRawRequest("HEAD", "/hello"), /*head=*/true);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->result(), http::status::ok);
  EXPECT_EQ(head->at(http::field::content_length), "5");
  EXPECT_TRUE(head->body().empty());

  auto thrown = connection->RoundTrip(MakeRawRequest("GET", "/throw"));
  ASSERT_TRUE(thrown);
  EXPECT_EQ(thrown->result(), http::status::internal_server_error);

  auto again = connection->RoundTrip(MakeRawRequest("GET", "/hello"));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->body(), "hello");
  EXPECT_EQ(server->stats().accepted_connections, 1U);
  EXPECT_EQ(server->stats().requests, 8U);
}

TEST(HttpServerTest, BuiltinHealthReadinessAndMetrics) {
  std::atomic<bool> ready{false};
  ServerOptions options = TestOptions();
  options.readiness = [&ready] { return ready.load(); };
  options.metrics = [] { return std::string("modelplane_up 1\n"); };
  auto server = StartServer(std::move(options), Router());
  ASSERT_TRUE(server);
  auto connection = Connect(*server);
  ASSERT_TRUE(connection);

  auto health = connection->RoundTrip(MakeRawRequest("GET", "/healthz"));
  ASSERT_TRUE(health);
  EXPECT_EQ(health->result(), http::status::ok);
  auto not_ready = connection->RoundTrip(MakeRawRequest("GET", "/readyz"));
  ASSERT_TRUE(not_ready);
  EXPECT_EQ(not_ready->result(), http::status::service_unavailable);
  ready = true;
  auto now_ready = connection->RoundTrip(MakeRawRequest("GET", "/readyz"));
  ASSERT_TRUE(now_ready);
  EXPECT_EQ(now_ready->result(), http::status::ok);
  auto metrics = connection->RoundTrip(MakeRawRequest("GET", "/metrics"));
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->body(), "modelplane_up 1\n");
  EXPECT_EQ(metrics->at(http::field::content_type), "text/plain; version=0.0.4; charset=utf-8");
}

TEST(HttpServerTest, OversizedHeaderGets431AndClose) {
  ServerOptions options = TestOptions();
  options.header_limit = 1024;
  auto server = StartServer(std::move(options), HelloRouter());
  ASSERT_TRUE(server);
  auto connection = Connect(*server);
  ASSERT_TRUE(connection);
  const std::string big_header = "X-Filler: " + std::string(4096, 'a') + "\r\n";
  auto response = connection->RoundTrip(MakeRawRequest("GET", "/hello", big_header));
  ASSERT_TRUE(response) << response.error().ToString();
  EXPECT_EQ(response->result(), http::status::request_header_fields_too_large);
  EXPECT_TRUE(connection->WaitClosed(5s));
}

TEST(HttpServerTest, OversizedBodyGets413WhetherDeclaredOrChunked) {
  ServerOptions options = TestOptions();
  options.body_limit = 1024;
  auto server = StartServer(std::move(options), HelloRouter());
  ASSERT_TRUE(server);

  auto declared = Connect(*server);
  ASSERT_TRUE(declared);
  auto response =
      declared->RoundTrip(MakeRawRequest("POST", "/echo", "", std::string(64 * 1024, 'b')));
  ASSERT_TRUE(response) << response.error().ToString();
  EXPECT_EQ(response->result(), http::status::payload_too_large);

  auto chunked = Connect(*server);
  ASSERT_TRUE(chunked);
  std::string request = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 4; ++i) request += "400\r\n" + std::string(1024, 'c') + "\r\n";
  request += "0\r\n\r\n";
  auto streamed = chunked->RoundTrip(request);
  ASSERT_TRUE(streamed) << streamed.error().ToString();
  EXPECT_EQ(streamed->result(), http::status::payload_too_large);

  auto fits = Connect(*server);
  ASSERT_TRUE(fits);
  auto small = fits->RoundTrip(MakeRawRequest("POST", "/echo", "", std::string(1000, 'd')));
  ASSERT_TRUE(small);
  EXPECT_EQ(small->result(), http::status::ok);
}

// max_concurrent_bodies: while one body is being handled, the next request with a body is
// answered 503 from its headers alone (its 64 MiB are never sent), requests without a body are
// not counted, and the slot frees when the first response is written.
TEST(HttpServerTest, RequestBodiesBeyondTheConcurrencyBoundGet503BeforeTheBodyIsRead) {
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  Router router = HelloRouter();
  router.Handle(http::verb::post, "/wait", [&](const ServerRequest& request) {
    entered.set_value();
    released.wait();
    return ServerResponse::Text(http::status::ok, request.body);
  });
  ServerOptions options = TestOptions();
  // Connections are dealt out to the threads in turn, and the accept loop runs on the first
  // one: the blocked handler must hold neither the accept loop nor the other connections.
  options.threads = 4;
  options.body_limit = 128ULL * 1024 * 1024;
  options.max_concurrent_bodies = 1;
  auto server = StartServer(std::move(options), std::move(router));
  ASSERT_TRUE(server);

  auto on_first_thread = Connect(*server);
  ASSERT_TRUE(on_first_thread);
  ASSERT_TRUE(on_first_thread->RoundTrip(MakeRawRequest("GET", "/hello")));
  auto busy = Connect(*server);
  ASSERT_TRUE(busy);
  auto held = std::async(std::launch::async,
                         [&] { return busy->RoundTrip(MakeRawRequest("POST", "/wait", "", "x")); });
  // Declared after `held`, so a failed assertion releases the handler before `held` joins.
  auto release_once = [&release] {
    try {
      release.set_value();
    } catch (const std::future_error&) {  // already released
    }
  };
  struct ReleaseGuard {
    std::function<void()> release;
    ~ReleaseGuard() { release(); }
  } guard{release_once};
  ASSERT_EQ(entered.get_future().wait_for(10s), std::future_status::ready);

  auto refused = Connect(*server);
  ASSERT_TRUE(refused);
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(refused->Send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 67108864\r\n\r\n"));
  auto response = refused->ReadResponse();
  ASSERT_TRUE(response) << response.error().ToString();
  EXPECT_EQ(response->result(), http::status::service_unavailable);
  EXPECT_EQ(response->at(http::field::retry_after), "1");
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
  EXPECT_TRUE(refused->WaitClosed(5s));
  EXPECT_EQ(server->stats().refused_busy, 1U);

  auto no_body = Connect(*server);
  ASSERT_TRUE(no_body);
  auto hello = no_body->RoundTrip(MakeRawRequest("GET", "/hello"));
  ASSERT_TRUE(hello) << hello.error().ToString();
  EXPECT_EQ(hello->result(), http::status::ok);

  release_once();
  auto first = held.get();
  ASSERT_TRUE(first) << first.error().ToString();
  EXPECT_EQ(first->result(), http::status::ok);
  auto after = busy->RoundTrip(MakeRawRequest("POST", "/echo", "", "again"));
  ASSERT_TRUE(after) << after.error().ToString();
  EXPECT_EQ(after->result(), http::status::ok);
  EXPECT_EQ(after->body(), "again");
}

TEST(HttpServerTest, ClientSendingHeadersSlowerThanTheDeadlineIsDisconnected) {
  ServerOptions options = TestOptions();
  options.header_timeout = 300ms;
  auto server = StartServer(std::move(options), HelloRouter());
  ASSERT_TRUE(server);
  auto connection = Connect(*server);
  ASSERT_TRUE(connection);
  ASSERT_TRUE(connection->Send("GET /hello HTTP/1.1\r\n"));
  // Each line arrives well within any per-read timeout, but the headers never end in time.
  for (int i = 0; i < 15; ++i) {
    std::this_thread::sleep_for(100ms);
    if (!connection->Send("X-Slow: a\r\n")) break;  // already reset: fine
  }
  EXPECT_TRUE(connection->WaitClosed(5s));
  // The server itself is fine.
  auto other = Connect(*server);
  ASSERT_TRUE(other);
  auto response = other->RoundTrip(MakeRawRequest("GET", "/hello"));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->result(), http::status::ok);
}

TEST(HttpServerTest, GracefulStopWaitsForInFlightHandler) {
  std::promise<void> entered;
  std::atomic<bool> finished{false};
  Router router;
  router.Handle(http::verb::get, "/slow", [&](const ServerRequest&) {
    entered.set_value();
    std::this_thread::sleep_for(500ms);
    finished = true;
    return ServerResponse::Text(http::status::ok, "done");
  });
  auto server = StartServer(TestOptions(), std::move(router));
  ASSERT_TRUE(server);
  auto busy = Connect(*server);
  auto idle = Connect(*server);
  ASSERT_TRUE(busy && idle);

  auto response = std::async(std::launch::async,
                             [&] { return busy->RoundTrip(MakeRawRequest("GET", "/slow")); });
  ASSERT_EQ(entered.get_future().wait_for(10s), std::future_status::ready);
  server->Stop();
  EXPECT_TRUE(finished);  // Stop returned only after the handler did

  auto result = response.get();
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_EQ(result->result(), http::status::ok);
  EXPECT_EQ(result->body(), "done");
  EXPECT_FALSE(result->keep_alive());
  EXPECT_TRUE(idle->WaitClosed(5s));
  EXPECT_FALSE(TestConnection::Open(server->port(), 2s).has_value());
}

TEST(HttpServerTest, ServesAThousandConcurrentKeepAliveConnections) {
  constexpr int kConnections = 1000;
  constexpr int kRounds = 3;
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_cur < 4 * kConnections) {
    limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, 4 * kConnections);
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &limit), 0);
  }
  auto server = StartServer(TestOptions(), HelloRouter());
  ASSERT_TRUE(server);
  std::vector<std::unique_ptr<TestConnection>> connections;
  connections.reserve(kConnections);
  for (int i = 0; i < kConnections; ++i) {
    connections.push_back(Connect(*server));
    ASSERT_TRUE(connections.back()) << "connection " << i;
  }
  for (int round = 0; round < kRounds; ++round) {
    // Every connection has a request outstanding before any response is read.
    for (auto& connection : connections) {
      ASSERT_TRUE(connection->Send(MakeRawRequest("GET", "/hello")));
    }
    int ok = 0;
    for (auto& connection : connections) {
      auto response = connection->ReadResponse();
      ASSERT_TRUE(response) << response.error().ToString();
      ok += response->result() == http::status::ok && response->body() == "hello";
    }
    EXPECT_EQ(ok, kConnections) << "round " << round;
  }
  const ServerStats stats = server->stats();
  EXPECT_EQ(stats.accepted_connections, static_cast<std::uint64_t>(kConnections));
  EXPECT_EQ(stats.open_connections, static_cast<std::uint64_t>(kConnections));
  EXPECT_EQ(stats.requests, static_cast<std::uint64_t>(kConnections * kRounds));
}

TEST(HttpServerTest, KeepsAcceptingAfterAcceptFailsWithEmfile) {
#if defined(__SANITIZE_ADDRESS__)
  // The sanitizer runtimes probe memory through pipe(); with every descriptor in use they
  // cannot, and UBSan then reports valid Asio objects as having an invalid vptr. The plain
  // build runs this test.
  GTEST_SKIP() << "fd exhaustion breaks the sanitizer runtime's own checks; runs unsanitized";
#endif
  std::atomic<int> accept_failures{0};
  ServerOptions options = TestOptions();
  options.log = [&](HttpLogLevel, std::string_view event, std::string_view) {
    if (event == "accept_failed") ++accept_failures;
  };
  auto server = StartServer(std::move(options), HelloRouter());
  ASSERT_TRUE(server);

  rlimit original{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &original), 0);
  // Use up every descriptor but one, which the client socket then takes: the server's accept
  // has none left.
  std::vector<int> fillers;
  rlimit tight = original;
  tight.rlim_cur = 256;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &tight), 0);
  for (int fd = ::open("/dev/null", O_RDONLY); fd >= 0; fd = ::open("/dev/null", O_RDONLY)) {
    fillers.push_back(fd);
  }
  ASSERT_FALSE(fillers.empty());
  ::close(fillers.back());
  fillers.pop_back();
  auto connection = TestConnection::Open(server->port());
  for (int i = 0; i < 200 && accept_failures == 0; ++i) std::this_thread::sleep_for(10ms);
  for (int fd : fillers) ::close(fd);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &original), 0);
  ASSERT_TRUE(connection) << connection.error().ToString();
  EXPECT_GT(accept_failures.load(), 0);

  auto response = (*connection)->RoundTrip(MakeRawRequest("GET", "/hello"));
  ASSERT_TRUE(response) << response.error().ToString();
  EXPECT_EQ(response->result(), http::status::ok);
}

class StreamingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto directory = testing::TemporaryDirectory::Create("http-stream-");
    ASSERT_TRUE(directory);
    directory_.emplace(std::move(*directory));
    path_ = directory_->path() + "/blob";
    content_.resize(3 * 1024 * 1024 + 17);
    for (std::size_t i = 0; i < content_.size(); ++i) content_[i] = static_cast<char>(i * 7 % 251);
    std::ofstream(path_, std::ios::binary) << content_;
    Router router;
    router.Handle(http::verb::get, "/blob", [this](const ServerRequest&) {
      auto source = FileBodySource::Open(path_);
      if (!source) return ServerResponse::Text(http::status::not_found, "gone");
      return ServerResponse::Stream(std::move(*source));
    });
    ServerOptions options = TestOptions();
    options.stream_chunk_size = 256 * 1024;  // several chunks per response
    server_ = StartServer(std::move(options), std::move(router));
    ASSERT_TRUE(server_);
    connection_ = Connect(*server_);
    ASSERT_TRUE(connection_);
  }

  std::optional<testing::TemporaryDirectory> directory_;
  std::string path_;
  std::string content_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<TestConnection> connection_;
};

TEST_F(StreamingTest, WholeBodyPartialRangesAndUnsatisfiable) {
  auto whole = connection_->RoundTrip(MakeRawRequest("GET", "/blob"));
  ASSERT_TRUE(whole) << whole.error().ToString();
  EXPECT_EQ(whole->result(), http::status::ok);
  EXPECT_EQ(whole->at(http::field::accept_ranges), "bytes");
  EXPECT_TRUE(whole->body() == content_);

  auto middle =
      connection_->RoundTrip(MakeRawRequest("GET", "/blob", "Range: bytes=1000000-2999999\r\n"));
  ASSERT_TRUE(middle);
  EXPECT_EQ(middle->result(), http::status::partial_content);
  EXPECT_EQ(middle->at(http::field::content_range),
            "bytes 1000000-2999999/" + std::to_string(content_.size()));
  EXPECT_TRUE(middle->body() == content_.substr(1000000, 2000000));

  auto suffix = connection_->RoundTrip(MakeRawRequest("GET", "/blob", "Range: bytes=-10\r\n"));
  ASSERT_TRUE(suffix);
  EXPECT_EQ(suffix->result(), http::status::partial_content);
  EXPECT_EQ(suffix->body(), content_.substr(content_.size() - 10));

  const std::string past_end = "Range: bytes=" + std::to_string(content_.size()) + "-\r\n";
  auto unsatisfiable = connection_->RoundTrip(MakeRawRequest("GET", "/blob", past_end));
  ASSERT_TRUE(unsatisfiable);
  EXPECT_EQ(unsatisfiable->result(), http::status::range_not_satisfiable);
  EXPECT_EQ(unsatisfiable->at(http::field::content_range),
            "bytes */" + std::to_string(content_.size()));

  auto head = connection_->RoundTrip(MakeRawRequest("HEAD", "/blob"), /*head=*/true);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->at(http::field::content_length), std::to_string(content_.size()));

  // Still the same connection after all of that.
  EXPECT_EQ(server_->stats().accepted_connections, 1U);
}

// A client that stops reading mid-body must not hold the server: each write has a deadline,
// whether the body goes out with sendfile or with pread + send.
class StalledReaderTest : public ::testing::TestWithParam<bool> {};

TEST_P(StalledReaderTest, WriteDeadlineClosesAConnectionWhoseClientStoppedReading) {
  auto directory = testing::TemporaryDirectory::Create("http-stall-");
  ASSERT_TRUE(directory);
  const std::string path = directory->path() + "/blob";
  {
    std::ofstream file(path, std::ios::binary);
    const std::string block(1 << 20, 'z');
    for (int i = 0; i < 48; ++i) file << block;  // more than both socket buffers hold
  }
  Router router;
  router.Handle(http::verb::get, "/blob", [path](const ServerRequest&) {
    auto source = FileBodySource::Open(path);
    if (!source) return ServerResponse::Text(http::status::not_found, "gone");
    return ServerResponse::Stream(std::move(*source));
  });
  ServerOptions options = TestOptions();
  options.write_timeout = 300ms;
  options.use_sendfile = GetParam();
  auto server = StartServer(std::move(options), std::move(router));
  ASSERT_TRUE(server);
  auto connection = Connect(*server);
  ASSERT_TRUE(connection);
  ASSERT_TRUE(connection->Send(MakeRawRequest("GET", "/blob")));
  for (int i = 0; i < 500 && server->stats().requests == 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(server->stats().requests, 1U);
  // Read nothing; the server must give up on its own.
  for (int i = 0; i < 500 && server->stats().open_connections > 0; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(server->stats().open_connections, 0U);
}

INSTANTIATE_TEST_SUITE_P(SendfileAndCopy, StalledReaderTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param_info) {
                           return param_info.param ? "Sendfile" : "Copy";
                         });

}  // namespace
}  // namespace modelplane::core
