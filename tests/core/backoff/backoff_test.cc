#include "core/backoff/backoff.h"

#include <limits>

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST(ExponentialBackoffTest, CeilingDoublesFromInitialUpToMax) {
  const ExponentialBackoff backoff{.initial = milliseconds(100), .max = seconds(1)};
  EXPECT_EQ(backoff.Ceiling(0), milliseconds(100));  // no failure yet counts as the first
  EXPECT_EQ(backoff.Ceiling(1), milliseconds(100));
  EXPECT_EQ(backoff.Ceiling(2), milliseconds(200));
  EXPECT_EQ(backoff.Ceiling(4), milliseconds(800));
  EXPECT_EQ(backoff.Ceiling(5), seconds(1));
  // A streak far past the cap saturates; 2^1000 would overflow any integer.
  EXPECT_EQ(backoff.Ceiling(1000), seconds(1));
  EXPECT_EQ(backoff.Ceiling(std::numeric_limits<int>::max()), seconds(1));
}

TEST(ExponentialBackoffTest, JitterStaysWithinTheUpperHalfAndSpreads) {
  const ExponentialBackoff backoff{.initial = milliseconds(100), .max = seconds(30)};
  std::mt19937_64 random(7);
  for (int failures = 1; failures <= 12; ++failures) {
    const nanoseconds ceiling = backoff.Ceiling(failures);
    nanoseconds lowest = ceiling;
    nanoseconds highest{0};
    for (int draw = 0; draw < 200; ++draw) {
      const nanoseconds wait = backoff.Jittered(failures, random);
      ASSERT_GE(wait, ceiling / 2) << failures;
      ASSERT_LE(wait, ceiling) << failures;
      lowest = std::min(lowest, wait);
      highest = std::max(highest, wait);
    }
    // Clients that failed together do not come back together: 200 draws cover most of the
    // half-ceiling range (a fixed seed, so this cannot flake).
    EXPECT_GT(highest - lowest, ceiling / 4) << failures;
  }
}

TEST(ExponentialBackoffTest, AZeroInitialNeverWaits) {
  const ExponentialBackoff backoff{.initial = nanoseconds(0), .max = seconds(1)};
  std::mt19937_64 random(1);
  EXPECT_EQ(backoff.Ceiling(10), nanoseconds(0));
  EXPECT_EQ(backoff.Jittered(10, random), nanoseconds(0));
}

}  // namespace
}  // namespace modelplane::core
