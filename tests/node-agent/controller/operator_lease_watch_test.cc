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

  core::Clock::WallTime now_ = std::chrono::system_clock::now();
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
