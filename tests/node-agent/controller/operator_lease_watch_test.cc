#include "node-agent/controller/operator_lease_watch.h"

#include <gtest/gtest.h>

#include "core/api/timestamp.h"

namespace modelplane::agent {
namespace {

using std::chrono::seconds;

class LeaseShowsLiveHolderTest : public ::testing::Test {
 protected:
  core::Lease Lease(std::string holder, seconds renewed_ago, std::int64_t duration = 15) const {
    core::Lease lease;
    lease.holder_identity = std::move(holder);
    lease.lease_duration_seconds = duration;
    lease.renew_time = core::api::FormatTimestamp(
        std::chrono::time_point_cast<std::chrono::microseconds>(now_ - renewed_ago));
    return lease;
  }

  // Whole microseconds, as a Lease's renew time holds them: durations then compare exactly.
  core::Clock::WallTime now_ =
      std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
};

TEST_F(LeaseShowsLiveHolderTest, AHolderThatRenewedWithinTheDurationIsAlive) {
  EXPECT_TRUE(LeaseShowsLiveHolder(Lease("operator-a", seconds(3)), now_, seconds(0)));
}

TEST_F(LeaseShowsLiveHolderTest, ARenewalOlderThanTheDurationIsStale) {
  EXPECT_FALSE(LeaseShowsLiveHolder(Lease("operator-a", seconds(16)), now_, seconds(0)));
  EXPECT_TRUE(LeaseShowsLiveHolder(Lease("operator-a", seconds(16)), now_, seconds(5)))
      << "within the allowance for the clocks' disagreement";
  EXPECT_FALSE(LeaseShowsLiveHolder(Lease("operator-a", seconds(21)), now_, seconds(5)));
}

// The watch tells the admission the operator is alive for as long as the Lease vouches, not
// just until its next read: a read that is slow or fails on a loaded API server must not cut a
// follower's wait short while the operator renews.
TEST_F(LeaseShowsLiveHolderTest, TheHolderIsAliveUntilItsRenewalPlusDurationPlusSkew) {
  EXPECT_EQ(LeaseHolderAliveFor(Lease("operator-a", seconds(3)), now_, seconds(5)),
            std::chrono::duration_cast<core::Clock::WallTime::duration>(seconds(17)));
  EXPECT_EQ(LeaseHolderAliveFor(Lease("operator-a", seconds(20)), now_, seconds(5)),
            core::Clock::WallTime::duration::zero());
  EXPECT_EQ(LeaseHolderAliveFor(Lease("operator-a", seconds(60)), now_, seconds(5)),
            core::Clock::WallTime::duration::zero())
      << "never negative";
  EXPECT_EQ(LeaseHolderAliveFor(Lease("", seconds(0)), now_, seconds(5)),
            core::Clock::WallTime::duration::zero());
}

TEST_F(LeaseShowsLiveHolderTest, AReleasedOrMalformedLeaseShowsNoOne) {
  EXPECT_FALSE(LeaseShowsLiveHolder(Lease("", seconds(0)), now_, seconds(5))) << "released";
  EXPECT_FALSE(LeaseShowsLiveHolder(Lease("operator-a", seconds(0), 0), now_, seconds(5)));
  core::Lease garbled = Lease("operator-a", seconds(0));
  garbled.renew_time = "yesterday";
  EXPECT_FALSE(LeaseShowsLiveHolder(garbled, now_, seconds(5)));
  garbled.renew_time.clear();
  EXPECT_FALSE(LeaseShowsLiveHolder(garbled, now_, seconds(5)));
}

}  // namespace
}  // namespace modelplane::agent
