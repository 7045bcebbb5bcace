#include "operator/controllers/holdings.h"

#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

const std::string kA = "sha256:" + std::string(64, 'a');  // NOLINT(cert-err58-cpp)
const std::string kB = "sha256:" + std::string(64, 'b');  // NOLINT(cert-err58-cpp)

TEST(HoldingsTest, CopiesElsewhereInTheZoneAndBeyondLeavingTheNodeItselfOut) {
  const std::map<std::string, DigestFacts> fleet = {
      {kA, {.ready = {{"n0", "z1"}, {"n1", "z1"}}}},
      {kB, {.ready = {{"n0", "z1"}, {"n7", "z2"}}, .revoked = true, .force_purge = true}}};
  const auto holdings = PlanHoldings("n0", "z1", {kB, kA, kA},
                                     [&](const std::string& digest) { return fleet.at(digest); });
  ASSERT_EQ(holdings.size(), 2u);
  EXPECT_EQ(holdings[0], (core::api::Holding{.digest = kA, .peer_in_zone = true}));
  EXPECT_EQ(holdings[1],
            (core::api::Holding{
                .digest = kB, .peer_elsewhere = true, .revoked = true, .force_purge = true}));
}

TEST(HoldingsTest, TheOnlyCopyHasNoPeers) {
  const auto holdings = PlanHoldings("n0", "z1", {kA}, [](const std::string&) {
    return DigestFacts{.ready = {{"n0", "z1"}}};
  });
  ASSERT_EQ(holdings.size(), 1u);
  EXPECT_FALSE(holdings[0].peer_in_zone);
  EXPECT_FALSE(holdings[0].peer_elsewhere);
}

TEST(HoldingsTest, ProgressIntervalGrowsWithTheFleetInPowersOfTwo) {
  EXPECT_EQ(ProgressIntervalSeconds(0), 1);
  EXPECT_EQ(ProgressIntervalSeconds(50), 1);
  EXPECT_EQ(ProgressIntervalSeconds(51), 2);
  EXPECT_EQ(ProgressIntervalSeconds(1000), 32);
  EXPECT_EQ(ProgressIntervalSeconds(10000), 256);
  EXPECT_EQ(ProgressIntervalSeconds(1000000), 512);
  // The fleet's progress writes stay at or under the budget from 50 nodes up.
  for (std::size_t nodes : {50u, 100u, 999u, 5000u, 25000u}) {
    EXPECT_LE(static_cast<double>(nodes) / ProgressIntervalSeconds(nodes), 50.0) << nodes;
  }
}

TEST(HoldingsTest, OnlyChangesNearTheFirstCopiesWakeOtherHolders) {
  EXPECT_TRUE(HoldingMayChange("z1", "z1", 2));   // the second copy in my zone: mine has a peer
  EXPECT_FALSE(HoldingMayChange("z1", "z1", 3));  // a third changes nothing for anyone
  EXPECT_TRUE(HoldingMayChange("z2", "z1", 1));  // z1's first copy: z2's holders have one elsewhere
  EXPECT_TRUE(HoldingMayChange("z2", "z1", 0));  // and its last
  EXPECT_FALSE(HoldingMayChange("z2", "z1", 2));
}

}  // namespace
}  // namespace modelplane::controller
