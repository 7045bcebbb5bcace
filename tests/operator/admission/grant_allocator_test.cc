#include "operator/admission/grant_allocator.h"

#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

int Total(const std::vector<StagingGrant>& grants) {
  int total = 0;
  for (const StagingGrant& grant : grants) total += grant.streams;
  return total;
}

TEST(GrantAllocatorTest, HigherPriorityFirst) {
  const std::vector<StagingDemand> demands = {{.node = "gpu-0",
                                               .revision = "m/prestaged",
                                               .priority = StagingPriority::kPrestage,
                                               .wanted_streams = 8},
                                              {.node = "gpu-1",
                                               .revision = "m/rolling",
                                               .priority = StagingPriority::kRolloutStep,
                                               .wanted_streams = 6},
                                              {.node = "gpu-2",
                                               .revision = "m/refill",
                                               .priority = StagingPriority::kRollbackRefill,
                                               .wanted_streams = 3},
                                              {.node = "gpu-3",
                                               .revision = "m/guess",
                                               .priority = StagingPriority::kSpeculative,
                                               .wanted_streams = 4}};
  const auto grants = AllocateGrants(10, std::nullopt, demands);
  EXPECT_EQ(grants[1].streams, 6) << "the rollout step gets all it wants";
  EXPECT_EQ(grants[2].streams, 3) << "then the rollback refill";
  EXPECT_EQ(grants[0].streams, 1) << "prestage gets what is left";
  EXPECT_EQ(grants[3].streams, 0) << "speculative waits";
  EXPECT_EQ(Total(grants), 10);
}

TEST(GrantAllocatorTest, EqualPriorityIsShared) {
  const std::vector<StagingDemand> demands = {
      {.node = "a", .revision = "m/r1", .wanted_streams = 16},
      {.node = "b", .revision = "m/r2", .wanted_streams = 16},
      {.node = "c", .revision = "m/r3", .wanted_streams = 2}};
  const auto grants = AllocateGrants(12, std::nullopt, demands);
  EXPECT_EQ(grants[2].streams, 2) << "a small demand is met in full";
  EXPECT_EQ(grants[0].streams, 5);
  EXPECT_EQ(grants[1].streams, 5);
}

TEST(GrantAllocatorTest, NeverMoreThanTheBudgetAndARateSplitByStreams) {
  std::vector<StagingDemand> demands;
  demands.reserve(5);
  for (int i = 0; i < 5; ++i) {
    demands.push_back({.node = "n" + std::to_string(i), .revision = "m/r", .wanted_streams = 4});
  }
  const auto grants = AllocateGrants(3, 300'000'000, demands);
  EXPECT_EQ(Total(grants), 3);
  for (const StagingGrant& grant : grants) {
    if (grant.streams > 0) {
      EXPECT_EQ(grant.bytes_per_second, 100'000'000);
    } else {
      EXPECT_FALSE(grant.bytes_per_second);
    }
  }
  EXPECT_EQ(Total(AllocateGrants(0, std::nullopt, demands)), 0);
  EXPECT_TRUE(AllocateGrants(8, std::nullopt, {}).empty());
}

}  // namespace
}  // namespace modelplane::controller
