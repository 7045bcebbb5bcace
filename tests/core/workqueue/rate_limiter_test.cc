#include "core/workqueue/rate_limiter.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST(ItemExponentialRateLimiterTest, DoublesPerFailureAndSaturates) {
  ItemExponentialRateLimiter limiter(milliseconds(5), seconds(1));
  EXPECT_EQ(limiter.When("a"), milliseconds(5));
  EXPECT_EQ(limiter.When("a"), milliseconds(10));
  EXPECT_EQ(limiter.When("a"), milliseconds(20));
  EXPECT_EQ(limiter.When("b"), milliseconds(5)) << "items back off independently";
  EXPECT_EQ(limiter.NumRequeues("a"), 3);
  for (int i = 0; i < 200; ++i) (void)limiter.When("a");
  EXPECT_EQ(limiter.When("a"), seconds(1)) << "a long streak saturates instead of overflowing";
  limiter.Forget("a");
  EXPECT_EQ(limiter.NumRequeues("a"), 0);
  EXPECT_EQ(limiter.When("a"), milliseconds(5));
}

TEST(TokenBucketRateLimiterTest, BurstThenSpacedByRate) {
  ManualClock clock;
  TokenBucketRateLimiter limiter(/*per_second=*/2.0, /*burst=*/3, clock);
  EXPECT_EQ(limiter.When("x"), nanoseconds(0));
  EXPECT_EQ(limiter.When("y"), nanoseconds(0));
  EXPECT_EQ(limiter.When("z"), nanoseconds(0));
  EXPECT_EQ(limiter.When("x"), milliseconds(500)) << "the fourth token is 1/rate away";
  EXPECT_EQ(limiter.When("x"), milliseconds(1000)) << "debts accumulate for later callers";
  clock.Advance(seconds(60));
  // Refill is capped at the burst size, however long the bucket sat idle.
  EXPECT_EQ(limiter.When("x"), nanoseconds(0));
  EXPECT_EQ(limiter.When("x"), nanoseconds(0));
  EXPECT_EQ(limiter.When("x"), nanoseconds(0));
  EXPECT_EQ(limiter.When("x"), milliseconds(500));
}

TEST(MaxOfRateLimiterTest, DefaultControllerLimiterTakesTheLongerWait) {
  ManualClock clock;
  auto limiter = MakeDefaultControllerRateLimiter(clock);
  EXPECT_EQ(limiter->When("k"), milliseconds(5));
  EXPECT_EQ(limiter->When("k"), milliseconds(10));
  EXPECT_EQ(limiter->NumRequeues("k"), 2);
  // Exhaust the global bucket (burst 100): now every key waits on it, even a fresh one.
  for (int i = 0; i < 200; ++i) (void)limiter->When("other-" + std::to_string(i));
  EXPECT_GT(limiter->When("fresh"), seconds(5));
  limiter->Forget("k");
  EXPECT_EQ(limiter->NumRequeues("k"), 0);
}

}  // namespace
}  // namespace modelplane::core
