#include "core/runtime/component_runtime.h"

#include <signal.h>

#include <gtest/gtest.h>

#include "core/config/config_loader.h"
#include "core/http/http_client.h"

namespace modelplane::core {
namespace {

Result<ClientResponse> Get(HttpClient& client, std::uint16_t port, const std::string& path) {
  ClientRequest request;
  request.url = "http://127.0.0.1:" + std::to_string(port) + path;
  return client.Fetch(request);
}

TEST(ComponentRuntimeTest, ServesAdminEndpointsAndStopsOnSigterm) {
  auto runtime = ComponentRuntime::Create(
      {.component = "test", .admin = {.address = "127.0.0.1", .port = 0}, .log = {}});
  ASSERT_TRUE(runtime.has_value()) << runtime.error().ToString();
  auto counter = (*runtime)->metrics().AddCounter(
      {.name = "modelplane_test_events_total", .help = "Events seen by the test."});
  ASSERT_TRUE(counter.has_value());
  (*counter)->WithLabels({}).value().Increment(3);

  auto client = HttpClient::Create({.retry = {.max_attempts = 1}});
  ASSERT_TRUE(client.has_value());
  const auto port = (*runtime)->admin_port();
  auto health = Get(**client, port, "/healthz");
  ASSERT_TRUE(health.has_value()) << health.error().ToString();
  EXPECT_EQ(health->status, 200u);
  auto not_ready = Get(**client, port, "/readyz");  // the client turns a 503 into an Error
  ASSERT_FALSE(not_ready.has_value()) << "not ready until told";
  EXPECT_NE(not_ready.error().message().find("HTTP 503"), std::string::npos);
  (*runtime)->SetReady(true);
  EXPECT_EQ(Get(**client, port, "/readyz").value().status, 200u);
  auto metrics = Get(**client, port, "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_NE(metrics->body.find("modelplane_test_events_total 3"), std::string::npos)
      << metrics->body;

  // SIGTERM is blocked in this thread by Create and taken by the runtime's signal thread.
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  EXPECT_FALSE((*runtime)->shutdown().SleepFor((*runtime)->clock(), std::chrono::seconds(10)))
      << "SIGTERM must fire the shutdown token";
  (*runtime)->Stop();
  EXPECT_FALSE(Get(**client, port, "/healthz").has_value()) << "the admin server is stopped";
}

TEST(ComponentRuntimeTest, RejectsBadLogSettings) {
  auto bad_level = ComponentRuntime::Create(
      {.component = "test", .admin = {.port = 0}, .log = {.level = "loud"}});
  ASSERT_FALSE(bad_level.has_value());
  EXPECT_NE(bad_level.error().message().find("loud"), std::string::npos);
  auto bad_format = ComponentRuntime::Create(
      {.component = "test", .admin = {.port = 0}, .log = {.format = "xml"}});
  EXPECT_FALSE(bad_format.has_value());
}

struct SharedSections {
  AdminConfig admin;
  LogConfig log;
  KubernetesConfig kubernetes;
};
void BindConfig(ConfigMap& map, SharedSections& config) {
  map.Optional("admin", config.admin);
  map.Optional("log", config.log);
  map.Optional("kubernetes", config.kubernetes);
}

TEST(RuntimeConfigTest, SharedSectionsBindWithLocatedErrors) {
  auto good = LoadConfigString<SharedSections>(
      "admin: {address: 0.0.0.0, port: 9443}\nlog: {level: debug, format: json}\n"
      "kubernetes: {kubeconfig: /etc/kube/config, qps: 20, burst: 40}\n");
  ASSERT_TRUE(good.has_value()) << good.error().ToString();
  EXPECT_EQ(good->admin.port, 9443);
  EXPECT_EQ(good->log.format, "json");
  EXPECT_EQ(good->kubernetes.burst, 40);
  auto bad = LoadConfigString<SharedSections>("log:\n  format: xml\n", "agent.yaml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("agent.yaml:2"), std::string::npos) << bad.error().message();
  EXPECT_NE(bad.error().message().find("log.format"), std::string::npos);
  EXPECT_FALSE(LoadConfigString<SharedSections>("admin: {port: 70000}\n").has_value());
  EXPECT_FALSE(LoadConfigString<SharedSections>("kubernets: {}\n").has_value())
      << "a misspelt section is an error, not a silent default";
}

}  // namespace
}  // namespace modelplane::core
