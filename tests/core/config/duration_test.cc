#include "core/config/duration.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

using namespace std::chrono_literals;

TEST(DurationTest, ParsesUnitsAndSequences) {
  EXPECT_EQ(ParseDuration("30s").value(), 30s);
  EXPECT_EQ(ParseDuration("5m").value(), 5min);
  EXPECT_EQ(ParseDuration("250ms").value(), 250ms);
  EXPECT_EQ(ParseDuration("2h").value(), 2h);
  EXPECT_EQ(ParseDuration("1h30m").value(), 90min);
  EXPECT_EQ(ParseDuration("1m0.5s").value(), 60500ms);
  EXPECT_EQ(ParseDuration("1.5s").value(), 1500ms);
  EXPECT_EQ(ParseDuration(".5s").value(), 500ms);
  EXPECT_EQ(ParseDuration("10us").value(), 10us);
  EXPECT_EQ(ParseDuration("10\xC2\xB5s").value(), 10us);
  EXPECT_EQ(ParseDuration("7ns").value(), 7ns);
  EXPECT_EQ(ParseDuration("0").value(), 0s);
  EXPECT_EQ(ParseDuration("0s").value(), 0s);
  EXPECT_EQ(ParseDuration("2562047h").value(), 2562047h);  // near the int64 limit
}

TEST(DurationTest, RejectsWithTheInputQuoted) {
  for (const char* text : {"", "5", "s", "-5s", "5 s", "5sec", "1.2.3s", "5s ", " 5s", "1d",
                           "9999999999h", "18446744073709551616ns", "5s5"}) {
    const auto parsed = ParseDuration(text);
    ASSERT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(parsed.error().message().starts_with("invalid duration \"")) << text;
  }
  EXPECT_EQ(ParseDuration("5sec").error().message(),
            "invalid duration \"5sec\": expected a number followed by a unit (ns, us, ms, s, m, "
            "h)");
}

TEST(DurationTest, FormatsExactlyAndRoundTrips) {
  EXPECT_EQ(FormatDuration(0s), "0s");
  EXPECT_EQ(FormatDuration(90min), "90m");
  EXPECT_EQ(FormatDuration(2h), "2h");
  EXPECT_EQ(FormatDuration(1500ms), "1500ms");
  EXPECT_EQ(FormatDuration(7ns), "7ns");
  for (const std::chrono::nanoseconds value :
       std::initializer_list<std::chrono::nanoseconds>{1ns, 1001ns, 3s, 61s, 25h}) {
    EXPECT_EQ(ParseDuration(FormatDuration(value)).value(), value);
  }
}

}  // namespace
}  // namespace modelplane::core
