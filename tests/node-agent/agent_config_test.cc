#include "node-agent/agent_config.h"

#include <gtest/gtest.h>

#include "core/config/config_loader.h"

namespace modelplane::agent {
namespace {

using std::chrono::seconds;

core::Result<AgentConfig> Load(std::string_view yaml) {
  return core::LoadConfigString<AgentConfig>(yaml, "agent.yaml");
}

TEST(AgentConfigTest, TheOperatorLeaseAndTheFirstGrantWaitAreRead) {
  const auto config = Load(R"(admission:
  startGrace: 5s
  firstGrantWait: 90s
  operatorLease: {namespace: modelplane-system, name: modelplane-operator, pollInterval: 1s}
)");
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->admission.start_grace, seconds(5));
  EXPECT_EQ(config->admission.first_grant_wait, seconds(90));
  EXPECT_EQ(config->admission.operator_lease.namespace_name, "modelplane-system");
  EXPECT_EQ(config->admission.operator_lease.name, "modelplane-operator");
  EXPECT_EQ(config->admission.operator_lease.poll_interval, std::chrono::milliseconds(1000));
}

TEST(AgentConfigTest, WithoutAnOperatorLeaseNoneIsRead) {
  const auto config = Load("admission: {enabled: true}\n");
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_TRUE(config->admission.operator_lease.name.empty());
  EXPECT_EQ(config->admission.first_grant_wait, seconds(60));
}

TEST(AgentConfigTest, AHalfNamedLeaseOrAWaitShorterThanTheGraceIsRefused) {
  const auto half = Load("admission: {operatorLease: {name: modelplane-operator}}\n");
  ASSERT_FALSE(half);
  EXPECT_NE(half.error().ToString().find("operatorLease needs both"), std::string::npos)
      << half.error().ToString();
  const auto shorter = Load("admission: {startGrace: 30s, firstGrantWait: 10s}\n");
  ASSERT_FALSE(shorter);
  EXPECT_NE(shorter.error().ToString().find("firstGrantWait"), std::string::npos)
      << shorter.error().ToString();
}

}  // namespace
}  // namespace modelplane::agent
