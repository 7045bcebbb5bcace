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

}  // namespace
}  // namespace modelplane::controller
