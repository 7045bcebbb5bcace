#include "node-agent/peer/upload_throttle.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

using namespace std::chrono_literals;

TEST(UploadThrottleTest, UnlimitedNeverWaits) {
  core::ManualClock clock;
  UploadThrottle throttle(0, 0, clock);
  EXPECT_TRUE(throttle.unlimited());
  EXPECT_EQ(throttle.Reserve(1ull << 40), 0ns);
}

TEST(UploadThrottleTest, BurstIsFreeThenBytesArePaidAtTheRate) {
  core::ManualClock clock;
  UploadThrottle throttle(1000, 100, clock);  // 1000 B/s, 100 B burst
  EXPECT_EQ(throttle.Reserve(100), 0ns);      // the full bucket
  EXPECT_EQ(throttle.Reserve(100), 100ms);    // into debt: 100 B more take 0.1 s
  EXPECT_EQ(throttle.Reserve(500), 600ms);    // queued behind the previous reservation
  clock.Advance(600ms);
  EXPECT_EQ(throttle.Reserve(0), 0ns);
  EXPECT_EQ(throttle.Reserve(1), 1ms);
}

TEST(UploadThrottleTest, IdleTimeRefillsOnlyUpToTheBurst) {
  core::ManualClock clock;
  UploadThrottle throttle(1000, 100, clock);
  clock.Advance(1h);
  EXPECT_EQ(throttle.Reserve(100), 0ns);
  EXPECT_EQ(throttle.Reserve(1000), 1s);  // an hour idle bought no more than the burst
}

TEST(UploadThrottleTest, ConcurrentStreamsShareTheRate) {
  core::ManualClock clock;
  UploadThrottle throttle(1'000'000, 0, clock);
  // Four streams each take a 250 kB chunk at the same instant: together they pay one second.
  std::chrono::nanoseconds last{0};
  for (int stream = 0; stream < 4; ++stream) last = throttle.Reserve(250'000);
  EXPECT_EQ(last, 1s);
}

}  // namespace
}  // namespace modelplane::agent
