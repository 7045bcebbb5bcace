#include "core/metrics/histogram.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "core/metrics/histogram_buckets.h"

namespace modelplane::core {
namespace {

TEST(HistogramCellTest, BoundaryValuesCountInTheirOwnBucket) {
  const HistogramCell::Shape shape{{1, 2, 5}};
  HistogramCell cell(shape);
  for (const double value : {0.5, 1.0, 1.5, 2.0, 5.0, 5.1, 100.0}) cell.Observe(value);
  const HistogramSnapshot snapshot = cell.Snapshot();
  EXPECT_EQ(snapshot.cumulative_counts, (std::vector<std::uint64_t>{2, 4, 5, 7}));
  EXPECT_EQ(snapshot.count, 7u);
  EXPECT_DOUBLE_EQ(snapshot.sum, 115.1);
}

TEST(HistogramCellTest, NegativeInfinityAndNaN) {
  const HistogramCell::Shape shape{{0}};
  HistogramCell cell(shape);
  cell.Observe(-std::numeric_limits<double>::infinity());
  cell.Observe(std::numeric_limits<double>::infinity());
  EXPECT_EQ(cell.Snapshot().cumulative_counts, (std::vector<std::uint64_t>{1, 2}));
  cell.Observe(std::nan(""));
  const HistogramSnapshot snapshot = cell.Snapshot();
  EXPECT_EQ(snapshot.cumulative_counts, (std::vector<std::uint64_t>{1, 3}));
  EXPECT_TRUE(std::isnan(snapshot.sum));
}

TEST(HistogramCellTest, ExpositionIsCumulativeWithInfSumAndCount) {
  const HistogramCell::Shape shape{{0.25, 1}};
  HistogramCell cell(shape);
  cell.Observe(0.1);
  cell.Observe(0.5);
  cell.Observe(3);
  std::string out;
  cell.AppendSamples(out, "latency_seconds", R"(op="read")");
  EXPECT_EQ(out,
            "latency_seconds_bucket{op=\"read\",le=\"0.25\"} 1\n"
            "latency_seconds_bucket{op=\"read\",le=\"1\"} 2\n"
            "latency_seconds_bucket{op=\"read\",le=\"+Inf\"} 3\n"
            "latency_seconds_sum{op=\"read\"} 3.6\n"
            "latency_seconds_count{op=\"read\"} 3\n");
}

TEST(HistogramCellTest, ExpositionWithoutLabels) {
  const HistogramCell::Shape shape{{}};
  HistogramCell cell(shape);
  cell.Observe(2);
  std::string out;
  cell.AppendSamples(out, "h", "");
  EXPECT_EQ(out, "h_bucket{le=\"+Inf\"} 1\nh_sum 2\nh_count 1\n");
}

TEST(HistogramBucketsTest, Validation) {
  EXPECT_TRUE(ValidateBucketBounds({}));
  EXPECT_TRUE(ValidateBucketBounds({-1, 0, 1}));
  EXPECT_FALSE(ValidateBucketBounds({1, 1}));
  EXPECT_FALSE(ValidateBucketBounds({2, 1}));
  EXPECT_FALSE(ValidateBucketBounds({1, std::numeric_limits<double>::infinity()}));
  EXPECT_FALSE(ValidateBucketBounds({std::nan("")}));
  EXPECT_FALSE(ValidateBucketBounds(std::vector<double>(kMaxHistogramBuckets + 1, 0)));
}

TEST(HistogramBucketsTest, Generators) {
  EXPECT_EQ(ExponentialBuckets(1, 2, 4).value(), (std::vector<double>{1, 2, 4, 8}));
  EXPECT_EQ(LinearBuckets(0, 5, 3).value(), (std::vector<double>{0, 5, 10}));
  EXPECT_FALSE(ExponentialBuckets(0, 2, 4));
  EXPECT_FALSE(ExponentialBuckets(1, 1, 4));
  EXPECT_FALSE(LinearBuckets(0, 0, 3));
  EXPECT_FALSE(LinearBuckets(0, 1, 0));
  EXPECT_FALSE(LinearBuckets(0, 1, kMaxHistogramBuckets + 1));
  EXPECT_TRUE(ValidateBucketBounds(DefaultSecondsBuckets()));
}

}  // namespace
}  // namespace modelplane::core
