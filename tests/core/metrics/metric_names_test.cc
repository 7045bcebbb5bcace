#include "core/metrics/metric_names.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

TEST(MetricNamesTest, MetricNames) {
  EXPECT_TRUE(ValidateMetricName("modelplane_fetch_bytes_total"));
  EXPECT_TRUE(ValidateMetricName("job:rate5m"));
  EXPECT_TRUE(ValidateMetricName("_x9"));
  EXPECT_FALSE(ValidateMetricName(""));
  EXPECT_FALSE(ValidateMetricName("9lives"));
  EXPECT_FALSE(ValidateMetricName("has-dash"));
  EXPECT_FALSE(ValidateMetricName("has space"));
  EXPECT_FALSE(ValidateMetricName("caf\xC3\xA9"));
}

TEST(MetricNamesTest, LabelNames) {
  EXPECT_TRUE(ValidateLabelName("method"));
  EXPECT_TRUE(ValidateLabelName("_tier2"));
  EXPECT_FALSE(ValidateLabelName(""));
  EXPECT_FALSE(ValidateLabelName("a:b"));
  EXPECT_FALSE(ValidateLabelName("2xx"));
  const auto reserved = ValidateLabelName("__name__");
  ASSERT_FALSE(reserved);
  EXPECT_EQ(reserved.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(reserved.error().message().find("reserved"), std::string::npos);
}

}  // namespace
}  // namespace modelplane::core
