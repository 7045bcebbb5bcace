#include "core/api/timestamp.h"

#include <gtest/gtest.h>

#include "core/api/duration.h"

namespace modelplane::core::api {
namespace {

TEST(TimestampTest, ParsesAndFormatsRfc3339) {
  auto time = ParseTimestamp("2024-02-29T23:59:59Z");
  ASSERT_TRUE(time.has_value());
  EXPECT_EQ(FormatTimestamp(*time), "2024-02-29T23:59:59Z");
  EXPECT_EQ(time->time_since_epoch(), std::chrono::seconds(1709251199));
  auto offset = ParseTimestamp("2024-03-01T01:59:59.5+02:00");
  ASSERT_TRUE(offset.has_value());
  EXPECT_EQ(FormatTimestamp(*offset), "2024-02-29T23:59:59.500000Z");
  auto nanos = ParseTimestamp("1970-01-01T00:00:00.123456789z");
  ASSERT_TRUE(nanos.has_value());
  EXPECT_EQ(nanos->time_since_epoch(), std::chrono::microseconds(123456));
}

TEST(TimestampTest, RejectsMalformedTimestamps) {
  for (const char* bad :
       {"", "2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2024-01-01T24:00:00Z",
        "2024-01-01 00:00:00Z", "2024-01-01T00:00:00", "2024-01-01T00:00:00.Z",
        "2024-01-01T00:00:00+0200", "2024-01-01T00:00:00Zjunk", "0000-01-01T00:00:00Z",
        "2024-01-01T00:00:00.1234567890Z", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00",
        "２024-01-01T00:00:00Z"}) {
    EXPECT_FALSE(ParseTimestamp(bad).has_value()) << bad;
  }
}

TEST(DurationTest, ParsesHoursMinutesSeconds) {
  EXPECT_EQ(ParseDuration("24h"), std::chrono::hours(24));
  EXPECT_EQ(ParseDuration("1h30m"), std::chrono::minutes(90));
  EXPECT_EQ(ParseDuration("90s"), std::chrono::seconds(90));
  for (const char* bad : {"", "h", "1", "1d", "1.5h", "-1h", "1h 30m", "99999999999999999999h"}) {
    EXPECT_FALSE(ParseDuration(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace modelplane::core::api
