// The leader elector against an API server that answers every request with an error (a
// loopback server: 500s, as an API server without its storage, or 403s, as one whose RBAC is
// missing): it keeps campaigning, never leads, and stops when told. Before, a first read that
// failed left the observed lease null and the next look at it threw, aborting the operator.
#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "core/http/http_server.h"
#include "core/kube/leader_elector.h"

namespace modelplane::core {
namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;

class LeaderElectorRefusedTest : public ::testing::TestWithParam<http::status> {};

TEST_P(LeaderElectorRefusedTest, KeepsCampaigningAndStopsWhenTold) {
  std::atomic<int> requests{0};
  Router router;
  const http::status answer = GetParam();
  router.HandlePrefix(http::verb::get, "/", [&](const ServerRequest&) {
    ++requests;
    return ServerResponse::Text(answer, R"({"kind":"Status","status":"Failure"})");
  });
  router.HandlePrefix(http::verb::post, "/", [&](const ServerRequest&) {
    ++requests;
    return ServerResponse::Text(answer, R"({"kind":"Status","status":"Failure"})");
  });
  auto server = HttpServer::Create({}, std::move(router));
  ASSERT_TRUE(server) << server.error().ToString();
  KubeConfig config;
  config.server = "http://127.0.0.1:" + std::to_string((*server)->port());
  const SystemClock clock;
  auto client = KubeClient::Create(config, {}, clock);
  ASSERT_TRUE(client) << client.error().ToString();
  std::atomic<bool> led{false};
  auto elector =
      LeaderElector::Create(**client,
                            {.lease_namespace = "default",
                             .lease_name = "refused",
                             .identity = "candidate",
                             .lease_duration = 1500ms,
                             .renew_deadline = 1000ms,
                             .retry_period = 50ms},
                            {.on_started_leading = [&](CancellationToken&) { led = true; },
                             .on_stopped_leading = [](const std::string&) {},
                             .on_new_leader = [](const std::string&) {}},
                            clock);
  ASSERT_TRUE(elector) << elector.error().ToString();
  std::thread runner([&] { (*elector)->Run(); });
  // Several campaigns, each refused.
  const auto give_up = std::chrono::steady_clock::now() + 30s;
  while (requests.load() < 4 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(10ms);
  }
  (*elector)->Stop();
  runner.join();
  EXPECT_GE(requests.load(), 4) << "stopped campaigning after a refusal";
  EXPECT_FALSE(led.load());
  EXPECT_FALSE((*elector)->IsLeader());
}

INSTANTIATE_TEST_SUITE_P(Answers, LeaderElectorRefusedTest,
                         ::testing::Values(http::status::internal_server_error,
                                           http::status::forbidden));

}  // namespace
}  // namespace modelplane::core
