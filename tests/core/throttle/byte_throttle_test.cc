#include "core/throttle/byte_throttle.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

using namespace std::chrono_literals;

TEST(ByteThrottleTest, UnlimitedNeverWaits) {
  ManualClock clock;
  ByteThrottle throttle(0, 0, clock);
  EXPECT_TRUE(throttle.unlimited());
  EXPECT_EQ(throttle.Reserve(1ull << 40), 0ns);
}

TEST(ByteThrottleTest, BurstIsFreeThenBytesArePaidAtTheRate) {
  ManualClock clock;
  ByteThrottle throttle(1000, 100, clock);  // 1000 B/s, 100 B burst
  EXPECT_EQ(throttle.Reserve(100), 0ns);    // the full bucket
  EXPECT_EQ(throttle.Reserve(100), 100ms);  // into debt: 100 B more take 0.1 s
  EXPECT_EQ(throttle.Reserve(500), 600ms);  // queued behind the previous reservation
  clock.Advance(600ms);
  EXPECT_EQ(throttle.Reserve(0), 0ns);
  EXPECT_EQ(throttle.Reserve(1), 1ms);
}

TEST(ByteThrottleTest, IdleTimeRefillsOnlyUpToTheBurst) {
  ManualClock clock;
  ByteThrottle throttle(1000, 100, clock);
  clock.Advance(1h);
  EXPECT_EQ(throttle.Reserve(100), 0ns);
  EXPECT_EQ(throttle.Reserve(1000), 1s);  // an hour idle bought no more than the burst
}

TEST(ByteThrottleTest, ConcurrentStreamsShareTheRate) {
  ManualClock clock;
  ByteThrottle throttle(1'000'000, 0, clock);
  // Four streams each take a 250 kB chunk at the same instant: together they pay one second.
  std::chrono::nanoseconds last{0};
  for (int stream = 0; stream < 4; ++stream) last = throttle.Reserve(250'000);
  EXPECT_EQ(last, 1s);
}

}  // namespace
}  // namespace modelplane::core
