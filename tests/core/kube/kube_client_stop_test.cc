// The Kubernetes client's waits against a loopback HTTP server that plays a throttling API
// server: a stop ends a wait for Retry-After and a request in flight at once, requests sent
// after the stop still go (a component's last writes), and an absurd Retry-After is cut.
#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "core/http/http_server.h"
#include "core/kube/kube_client.h"
#include "core/kube/resource_type.h"

namespace modelplane::core {
namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;

ServerResponse Throttled(const char* retry_after) {
  auto response = ServerResponse::Text(
      http::status::too_many_requests,
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests",)"
      R"("message":"too many requests","code":429})");
  response.headers.set(http::field::retry_after, retry_after);
  return response;
}

class KubeClientStopTest : public ::testing::Test {
 protected:
  void TearDown() override {
    ReleaseStalled();
    server_.reset();
  }

  void StartServer() {
    router_.HandlePrefix(
        http::verb::get, "/api/v1/namespaces/default/configmaps/",
        [this](const ServerRequest& request) {
          ++calls_;
          const std::string name = request.path.substr(request.path.rfind('/') + 1);
          if (name == "throttled") return Throttled("30");
          if (name == "absurd" && calls_ == 1) return Throttled("3600");
          if (name == "stalled") {
            std::unique_lock lock(mutex_);
            released_changed_.wait(lock, [this] { return released_; });
          }
          return ServerResponse::Text(
              http::status::ok, R"({"kind":"ConfigMap","metadata":{"name":")" + name + R"("}})");
        });
    ServerOptions options;
    options.threads = 4;
    options.stop_grace = 1s;
    auto server = HttpServer::Create(std::move(options), std::move(router_));
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
  }

  std::unique_ptr<KubeClient> MakeClient(const Clock& clock) {
    KubeConfig config;
    config.server = "http://127.0.0.1:" + std::to_string(server_->port());
    auto client = KubeClient::Create(config, {.stop = &stop_}, clock);
    EXPECT_TRUE(client) << client.error().ToString();
    return client ? std::move(*client) : nullptr;
  }

  void ReleaseStalled() {
    std::lock_guard lock(mutex_);
    released_ = true;
    released_changed_.notify_all();
  }

  // Stops the client once the server has seen the request, and says how long the call took
  // to return after that.
  std::chrono::steady_clock::duration StopAndTime(std::future<Result<nlohmann::json>>& call) {
    while (calls_.load() == 0) std::this_thread::yield();
    const auto stopped_at = std::chrono::steady_clock::now();
    stop_.Cancel();
    call.wait();
    return std::chrono::steady_clock::now() - stopped_at;
  }

  Router router_;
  std::unique_ptr<HttpServer> server_;
  CancellationToken stop_;
  std::atomic<int> calls_{0};
  std::mutex mutex_;
  std::condition_variable released_changed_;
  bool released_ = false;
};

TEST_F(KubeClientStopTest, AStopEndsTheWaitForRetryAfterAtOnce) {
  StartServer();
  // A clock that does not move, so the wait is surely the one for Retry-After when the stop
  // comes (the clock says when the client waits) and only the stop can end it.
  ManualClock clock;
  auto client = MakeClient(clock);
  auto call = std::async(std::launch::async, [&] {
    return client->Get(resources::ConfigMaps(), "default", "throttled");
  });
  while (clock.waiting() == 0) std::this_thread::yield();
  const auto took = StopAndTime(call);
  auto result = call.get();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), ErrorCode::kCancelled) << result.error().ToString();
  EXPECT_NE(result.error().message().find("429"), std::string::npos) << result.error().message();
  EXPECT_LT(took, 1s) << "waited out Retry-After: 30 after the stop";
  EXPECT_EQ(calls_.load(), 1);
}

TEST_F(KubeClientStopTest, AStopEndsARequestInFlightAndLaterRequestsStillGo) {
  StartServer();
  const SystemClock clock;
  auto client = MakeClient(clock);
  auto call = std::async(std::launch::async, [&] {
    return client->Get(resources::ConfigMaps(), "default", "stalled");
  });
  const auto took = StopAndTime(call);
  auto result = call.get();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), ErrorCode::kCancelled) << result.error().ToString();
  EXPECT_LT(took, 1s) << "waited for the stalled answer after the stop";
  ReleaseStalled();

  // After the stop: a request is sent and answered (a lease released, a last status) ...
  auto last_write = client->Get(resources::ConfigMaps(), "default", "after-stop");
  ASSERT_TRUE(last_write) << last_write.error().ToString();
  EXPECT_EQ((*last_write)["metadata"]["name"], "after-stop");
  // ... but a throttled one is not retried: one request reaches the server, and the answer
  // comes without waiting out its Retry-After of 30 s (10 s is far below that on any load).
  const int calls_before = calls_.load();
  const auto throttled_at = std::chrono::steady_clock::now();
  auto throttled = client->Get(resources::ConfigMaps(), "default", "throttled");
  ASSERT_FALSE(throttled);
  EXPECT_LT(std::chrono::steady_clock::now() - throttled_at, 10s);
  EXPECT_EQ(calls_.load(), calls_before + 1) << "retried after the stop";
}

TEST_F(KubeClientStopTest, AnAbsurdRetryAfterIsCutToTheLongestHonoured) {
  StartServer();
  ManualClock clock;
  auto client = MakeClient(clock);
  auto call = std::async(std::launch::async,
                         [&] { return client->Get(resources::ConfigMaps(), "default", "absurd"); });
  while (clock.waiting() == 0) std::this_thread::yield();
  EXPECT_EQ(calls_.load(), 1);
  clock.Advance(KubeClientOptions{}.max_retry_after);
  auto result = call.get();
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_EQ(calls_.load(), 2) << "retried after the cut wait, not after an hour";
}

}  // namespace
}  // namespace modelplane::core
