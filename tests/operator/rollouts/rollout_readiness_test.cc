#include "operator/rollouts/rollout_readiness.h"

#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

constexpr std::int64_t kOneGiB = 1LL << 30;
constexpr double kHundredMiBPerSecond = 100.0 * (1 << 20);

TEST(RolloutReadinessTest, EachZoneCostsTheOriginOneCopyAtTheBudgetsRate) {
  // Zone a: one node lacks all 10 GiB, its neighbour half (it copies from peers meanwhile);
  // zone b: 4 GiB. 14 GiB through the origin at 100 MiB/s.
  const auto seconds = PredictStagingSeconds({{.zone = "a", .missing_bytes = 10 * kOneGiB},
                                              {.zone = "a", .missing_bytes = 5 * kOneGiB},
                                              {.zone = "b", .missing_bytes = 4 * kOneGiB}},
                                             kHundredMiBPerSecond);
  ASSERT_TRUE(seconds.has_value());
  EXPECT_DOUBLE_EQ(*seconds, 14.0 * 1024 / 100);
}

TEST(RolloutReadinessTest, NodesWithoutAZoneShareOne) {
  const auto seconds = PredictStagingSeconds(
      {{.missing_bytes = 2 * kOneGiB}, {.missing_bytes = 2 * kOneGiB}}, kHundredMiBPerSecond);
  ASSERT_TRUE(seconds.has_value());
  EXPECT_DOUBLE_EQ(*seconds, 2.0 * 1024 / 100);
}

TEST(RolloutReadinessTest, NothingMissingTakesNoTimeWhateverTheRate) {
  EXPECT_EQ(PredictStagingSeconds({{.zone = "a", .missing_bytes = 0}}, std::nullopt), 0.0);
  EXPECT_EQ(PredictStagingSeconds({}, std::nullopt), 0.0);
}

TEST(RolloutReadinessTest, NoPredictionWithoutARate) {
  EXPECT_FALSE(PredictStagingSeconds({{.zone = "a", .missing_bytes = kOneGiB}}, std::nullopt));
  EXPECT_FALSE(PredictStagingSeconds({{.zone = "a", .missing_bytes = kOneGiB}}, 0.0));
}

}  // namespace
}  // namespace modelplane::controller
