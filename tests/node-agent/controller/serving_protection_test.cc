#include "node-agent/controller/serving_protection.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

constexpr std::uint64_t kGB = 1'000'000'000;

TEST(ServingProtectionTest, AServingNodeKeepsHalfItsDiskAndNetworkForInference) {
  const ServingProtection protection{
      .share = 0.5, .media_bytes_per_second = 4 * kGB, .network_bytes_per_second = 10 * kGB};
  EXPECT_EQ(LimitsWhile(true, protection), (TransferLimits{.write_bytes_per_second = 2 * kGB,
                                                           .upload_bytes_per_second = 5 * kGB}));
  EXPECT_EQ(LimitsWhile(false, protection), TransferLimits{}) << "an idle node loads at full speed";
}

TEST(ServingProtectionTest, TheConfiguredUploadCapHoldsAndTheTighterWins) {
  ServingProtection protection{
      .share = 0.5, .network_bytes_per_second = 10 * kGB, .upload_cap = 1 * kGB};
  EXPECT_EQ(LimitsWhile(false, protection).upload_bytes_per_second, 1 * kGB);
  EXPECT_EQ(LimitsWhile(true, protection).upload_bytes_per_second, 1 * kGB);
  protection.upload_cap = 8 * kGB;
  EXPECT_EQ(LimitsWhile(true, protection).upload_bytes_per_second, 5 * kGB);
}

TEST(ServingProtectionTest, UnknownBandwidthsAndAFullShareLimitNothing) {
  EXPECT_EQ(LimitsWhile(true, {.share = 0.5}), TransferLimits{});
  EXPECT_EQ(LimitsWhile(true, {.share = 1.0, .media_bytes_per_second = kGB}), TransferLimits{});
}

}  // namespace
}  // namespace modelplane::agent
