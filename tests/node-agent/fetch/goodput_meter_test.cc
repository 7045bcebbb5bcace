#include "node-agent/fetch/goodput_meter.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

using std::chrono::seconds;

constexpr core::Clock::SteadyTime kStart{std::chrono::hours(1)};

TEST(GoodputMeterTest, MeasuresLandedBytesOverTheWindowAndPredictsTheFinish) {
  GoodputMeter meter(seconds(10));
  EXPECT_FALSE(meter.BytesPerSecond()) << "one sample says nothing";
  meter.Sample(kStart, 0);
  meter.Sample(kStart + seconds(5), 500);
  EXPECT_DOUBLE_EQ(*meter.BytesPerSecond(), 100);
  EXPECT_FALSE(meter.WindowCovered());
  EXPECT_EQ(meter.ExpectedFinish(1000), seconds(10));
  // A fast start then a stall: after the window, only the stall counts.
  meter.Sample(kStart + seconds(10), 1000);
  meter.Sample(kStart + seconds(20), 1000);
  meter.Sample(kStart + seconds(21), 1000);
  EXPECT_TRUE(meter.WindowCovered());
  EXPECT_DOUBLE_EQ(*meter.BytesPerSecond(), 0);
  EXPECT_FALSE(meter.ExpectedFinish(1)) << "no finish in sight while nothing lands";
}

TEST(GoodputMeterTest, KeepsTheWindowMeasuredWholeWithFewSamples) {
  GoodputMeter meter(seconds(10));
  meter.Sample(kStart, 0);
  meter.Sample(kStart + seconds(30), 3000);
  // The only older sample is 30 s back: the rate is over those 30 s, not an empty window.
  EXPECT_DOUBLE_EQ(*meter.BytesPerSecond(), 100);
  EXPECT_TRUE(meter.WindowCovered());
}

}  // namespace
}  // namespace modelplane::agent
