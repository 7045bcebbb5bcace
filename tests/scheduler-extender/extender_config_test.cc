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
  EXPECT_EQ(config->server.body_limit.bytes, 1u << 20);
  EXPECT_EQ(config->server.max_nodes, 5000u);
  EXPECT_EQ(config->server.max_concurrent_bodies, 8u);
  EXPECT_TRUE(config->server.address.empty());  // the pod's own address
  EXPECT_FALSE(config->server.tls.Enabled());
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
  maxNodes: 15000
  maxConcurrentBodies: 3
  threads: 2
  bodyTimeout: 3s
  tls:
    certFile: /tls/tls.crt
    keyFile: /tls/tls.key
    clientCAFile: /tls/ca.crt
    clientNames: [modelplane-scheduler]
)");
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->server.address, "127.0.0.1");
  EXPECT_EQ(config->server.port, 18888);
  EXPECT_EQ(config->server.FilterPath(), "/ext/f");  // kube-scheduler trims the slash too
  EXPECT_EQ(config->server.PrioritizePath(), "/ext/p");
  EXPECT_EQ(config->server.body_limit.bytes, 8u << 20);
  EXPECT_EQ(config->server.threads, 2);
  EXPECT_EQ(config->server.body_timeout, std::chrono::seconds(3));
  EXPECT_EQ(config->server.max_nodes, 15000u);
  EXPECT_EQ(config->server.max_concurrent_bodies, 3u);
  EXPECT_EQ(config->server.tls.certificate_file, "/tls/tls.crt");
  EXPECT_EQ(config->server.tls.private_key_file, "/tls/tls.key");
  EXPECT_EQ(config->server.tls.client_ca_file, "/tls/ca.crt");
  EXPECT_EQ(config->server.tls.client_names, std::vector<std::string>{"modelplane-scheduler"});
  EXPECT_TRUE(config->server.tls.MutualTls());
  EXPECT_EQ(config->kubernetes.kubeconfig, "/etc/kubeconfig");
}

TEST(ExtenderConfigTest, RejectsBadPathsVerbsAndUnknownKeys) {
  for (const char* text :
       {"server: {pathPrefix: scheduler}", "server: {filterVerb: 'a/b'}",
        "server: {prioritizeVerb: ''}", "server: {filterVerb: same, prioritizeVerb: same}",
        "server: {bodyLimit: 1Ki}", "server: {threads: 0}", "server: {prot: 1}",
        "server: {maxNodes: 0}", "server: {maxConcurrentBodies: 0}",
        "server: {tls: {certFile: /a}}", "server: {tls: {keyFile: /a}}",
        "server: {tls: {clientCAFile: /ca}}",
        "server: {tls: {certFile: /a, keyFile: /b, clientNames: [x]}}",
        "server: {tls: {certFile: /a, keyFile: /b, clientCA: /c}}"}) {
    auto config = core::LoadConfigString<ExtenderConfig>(text);
    EXPECT_FALSE(config) << text;
  }
}

TEST(ExtenderConfigTest, ListensOnThePodsAddressUnlessOneIsSet) {
  ExtenderServerConfig config;
  auto pod = ListenAddress(config, "10.1.2.3");
  ASSERT_TRUE(pod) << pod.error().ToString();
  EXPECT_EQ(*pod, "10.1.2.3");
  EXPECT_FALSE(ListenAddress(config, std::nullopt));  // never every interface by accident
  EXPECT_FALSE(ListenAddress(config, ""));
  config.address = "0.0.0.0";
  EXPECT_EQ(ListenAddress(config, "10.1.2.3").value_or(""), "0.0.0.0");
}

}  // namespace
}  // namespace modelplane::extender
