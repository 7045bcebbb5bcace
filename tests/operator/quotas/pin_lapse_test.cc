#include "operator/quotas/pin_lapse.h"

#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using core::api::Timestamp;
using std::chrono::hours;

constexpr Timestamp kCreated{hours(1000)};

TEST(PinLapseTest, CountsFromTheLastUseOnThePinnedNode) {
  EXPECT_EQ(PinLapse(Timestamp{hours(1010)}, Timestamp{hours(1020)}, kCreated, hours(24)),
            Timestamp{hours(1034)});
}

TEST(PinLapseTest, ANodeWithoutAUseCountsFromTheLastUseAnywhere) {
  EXPECT_EQ(PinLapse(std::nullopt, Timestamp{hours(1020)}, kCreated, hours(24)),
            Timestamp{hours(1044)});
}

TEST(PinLapseTest, ARevisionNeverUsedCountsFromItsCreation) {
  EXPECT_EQ(PinLapse(std::nullopt, std::nullopt, kCreated, hours(2)), Timestamp{hours(1002)});
}

}  // namespace
}  // namespace modelplane::controller
