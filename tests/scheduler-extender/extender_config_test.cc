// The configuration file: defaults, every key, and the checks on paths and verbs.
#include "scheduler-extender/extender_config.h"

#include <gtest/gtest.h>

#include "core/config/config_loader.h"

namespace modelplane::extender {
namespace {

TEST(ExtenderConfigTest, DefaultsServeTheVerbsUnderScheduler) {
  auto config = core::LoadConfigString<ExtenderConfig>("");
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->server.port, 8888);
  EXPECT_EQ(config->server.FilterPath(), "/scheduler/filter");
  EXPECT_EQ(config->server.PrioritizePath(), "/scheduler/prioritize");
  EXPECT_EQ(config->server.body_limit.bytes, 64u << 20);
}

TEST(ExtenderConfigTest, ReadsEveryKey) {
  auto config = core::LoadConfigString<ExtenderConfig>(R"(
admin: {address: 0.0.0.0, port: 9090}
log: {level: debug, format: json}
kubernetes: {kubeconfig: /etc/kubeconfig, qps: 20, burst: 40}
server:
  address: 127.0.0.1
  port: 18888
  pathPrefix: /ext/
  filterVerb: f
  prioritizeVerb: p
  bodyLimit: 8Mi
  threads: 2
  bodyTimeout: 3s
)");
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->server.address, "127.0.0.1");
  EXPECT_EQ(config->server.port, 18888);
  EXPECT_EQ(config->server.FilterPath(), "/ext/f");  // kube-scheduler trims the slash too
  EXPECT_EQ(config->server.PrioritizePath(), "/ext/p");
  EXPECT_EQ(config->server.body_limit.bytes, 8u << 20);
  EXPECT_EQ(config->server.threads, 2);
  EXPECT_EQ(config->server.body_timeout, std::chrono::seconds(3));
  EXPECT_EQ(config->kubernetes.kubeconfig, "/etc/kubeconfig");
}

TEST(ExtenderConfigTest, RejectsBadPathsVerbsAndUnknownKeys) {
  for (const char* text :
       {"server: {pathPrefix: scheduler}", "server: {filterVerb: 'a/b'}",
        "server: {prioritizeVerb: ''}", "server: {filterVerb: same, prioritizeVerb: same}",
        "server: {bodyLimit: 1Ki}", "server: {threads: 0}", "server: {prot: 1}"}) {
    auto config = core::LoadConfigString<ExtenderConfig>(text);
    EXPECT_FALSE(config) << text;
  }
}

}  // namespace
}  // namespace modelplane::extender
