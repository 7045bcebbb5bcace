#include "operator/operator_config.h"

#include <gtest/gtest.h>

#include "core/config/config_loader.h"

namespace modelplane::controller {
namespace {

TEST(OperatorConfigTest, DefaultsAndOverrides) {
  auto defaults = core::LoadConfigString<OperatorConfig>("");
  ASSERT_TRUE(defaults.has_value()) << defaults.error().ToString();
  EXPECT_TRUE(defaults->leader_election.enabled);
  EXPECT_EQ(defaults->leader_election.lease_duration, std::chrono::seconds(15));
  auto custom = core::LoadConfigString<OperatorConfig>(
      "leaderElection:\n  namespace: ops\n  leaseDuration: 30s\n  renewDeadline: 20s\n");
  ASSERT_TRUE(custom.has_value()) << custom.error().ToString();
  EXPECT_EQ(custom->leader_election.namespace_name, "ops");
  EXPECT_EQ(custom->leader_election.renew_deadline, std::chrono::seconds(20));
}

TEST(OperatorConfigTest, RenewDeadlineMustBeShorterThanLease) {
  auto bad = core::LoadConfigString<OperatorConfig>(
      "leaderElection:\n  leaseDuration: 5s\n  renewDeadline: 5s\n", "operator.yaml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("renewDeadline must be shorter"), std::string::npos)
      << bad.error().message();
}

TEST(OperatorConfigTest, ControllersSection) {
  auto defaults = core::LoadConfigString<OperatorConfig>("");
  ASSERT_TRUE(defaults.has_value()) << defaults.error().ToString();
  EXPECT_EQ(defaults->controllers.namespace_name, "");
  EXPECT_EQ(defaults->controllers.resync_period, std::chrono::minutes(5));
  EXPECT_EQ(defaults->controllers.revision_workers, 4);
  auto custom = core::LoadConfigString<OperatorConfig>(
      "controllers:\n  namespace: models\n  resyncPeriod: 30s\n  revisionWorkers: 8\n"
      "  cacheWorkers: 1\n");
  ASSERT_TRUE(custom.has_value()) << custom.error().ToString();
  EXPECT_EQ(custom->controllers.namespace_name, "models");
  EXPECT_EQ(custom->controllers.resync_period, std::chrono::seconds(30));
  EXPECT_EQ(custom->controllers.revision_workers, 8);
  EXPECT_EQ(custom->controllers.cache_workers, 1);
  auto bad = core::LoadConfigString<OperatorConfig>("controllers:\n  revisionWorkers: 0\n");
  EXPECT_FALSE(bad.has_value());
}

TEST(OperatorConfigTest, WebhookSection) {
  auto defaults = core::LoadConfigString<OperatorConfig>("");
  ASSERT_TRUE(defaults.has_value()) << defaults.error().ToString();
  EXPECT_FALSE(defaults->webhook.enabled);
  EXPECT_EQ(defaults->webhook.port, 9443);
  EXPECT_EQ(defaults->webhook.volume_mode, "csi");
  EXPECT_EQ(defaults->webhook.scheduler_name, "modelplane-scheduler");
  auto custom = core::LoadConfigString<OperatorConfig>(
      "webhook:\n  enabled: true\n  port: 8443\n  certificateFile: /tls/tls.crt\n"
      "  keyFile: /tls/tls.key\n  schedulerName: \"\"\n  volumeMode: hostPath\n"
      "  hostCacheRoot: /mnt/nvme/modelplane\n");
  ASSERT_TRUE(custom.has_value()) << custom.error().ToString();
  EXPECT_TRUE(custom->webhook.enabled);
  EXPECT_EQ(custom->webhook.port, 8443);
  EXPECT_EQ(custom->webhook.key_file, "/tls/tls.key");
  EXPECT_EQ(custom->webhook.volume_mode, "hostPath");
  EXPECT_EQ(custom->webhook.host_cache_root, "/mnt/nvme/modelplane");
  for (const char* bad : {"webhook:\n  volumeMode: nfs\n", "webhook:\n  hostCacheRoot: cache\n",
                          "webhook:\n  port: 70000\n", "webhook:\n  certFile: x\n"}) {
    EXPECT_FALSE(core::LoadConfigString<OperatorConfig>(bad).has_value()) << bad;
  }
}

TEST(OperatorConfigTest, CredentialsOnTheWebhooksPortOrAListenerOfTheirOwn) {
  auto shared = core::LoadConfigString<OperatorConfig>(
      "webhook: {enabled: true}\ncredentials: {enabled: true}\n");
  ASSERT_TRUE(shared.has_value()) << shared.error().ToString();
  EXPECT_FALSE(shared->credentials.port.has_value());
  auto own = core::LoadConfigString<OperatorConfig>(
      "webhook: {enabled: true}\ncredentials: {enabled: true, port: 8445, threads: 6}\n");
  ASSERT_TRUE(own.has_value()) << own.error().ToString();
  EXPECT_EQ(own->credentials.port, 8445);
  EXPECT_EQ(own->credentials.threads, 6);
  for (const char* bad : {"webhook: {enabled: true}\ncredentials: {enabled: true, threads: 1}\n",
                          "webhook: {enabled: true}\ncredentials: {port: 70000}\n",
                          "credentials: {enabled: true, port: 8445}\n"}) {
    EXPECT_FALSE(core::LoadConfigString<OperatorConfig>(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace modelplane::controller
