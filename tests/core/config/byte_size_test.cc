#include "core/config/byte_size.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

TEST(ByteSizeTest, ParsesDecimalAndBinaryUnits) {
  EXPECT_EQ(ParseByteSize("512").value(), 512u);
  EXPECT_EQ(ParseByteSize("512B").value(), 512u);
  EXPECT_EQ(ParseByteSize("256Mi").value(), 256ull << 20);
  EXPECT_EQ(ParseByteSize("8MiB").value(), 8ull << 20);
  EXPECT_EQ(ParseByteSize("1G").value(), 1'000'000'000u);
  EXPECT_EQ(ParseByteSize("1GB").value(), 1'000'000'000u);
  EXPECT_EQ(ParseByteSize("4k").value(), 4000u);
  EXPECT_EQ(ParseByteSize("4K").value(), 4000u);
  EXPECT_EQ(ParseByteSize("4Ki").value(), 4096u);
  EXPECT_EQ(ParseByteSize("1.5Gi").value(), 3ull << 29);
  EXPECT_EQ(ParseByteSize("2Ti").value(), 2ull << 40);
  EXPECT_EQ(ParseByteSize("15Ei").value(), 15ull << 60);
  EXPECT_EQ(ParseByteSize("0").value(), 0u);
  EXPECT_EQ(ParseByteSize("18446744073709551615").value(), 18446744073709551615ull);
}

TEST(ByteSizeTest, Rejects) {
  for (const char* text : {"", "Mi", "-1Mi", "1 Mi", "1mi", "1m", "1Xi", "16Ei", "20E",
                           "18446744073709551616", "1.5.5G", "1GiBs"}) {
    const auto parsed = ParseByteSize(text);
    ASSERT_FALSE(parsed) << text;
    EXPECT_TRUE(parsed.error().message().starts_with("invalid byte size \"")) << text;
  }
}

TEST(ByteSizeTest, FormatsWithTheLargestExactBinaryUnit) {
  EXPECT_EQ(FormatByteSize(0), "0");
  EXPECT_EQ(FormatByteSize(1000), "1000");
  EXPECT_EQ(FormatByteSize(1024), "1Ki");
  EXPECT_EQ(FormatByteSize(256ull << 20), "256Mi");
  EXPECT_EQ(FormatByteSize(3ull << 29), "1536Mi");
  for (const std::uint64_t value : {1ull, 1000ull, 4096ull, 5ull << 40, 18446744073709551615ull}) {
    EXPECT_EQ(ParseByteSize(FormatByteSize(value)).value(), value);
  }
}

}  // namespace
}  // namespace modelplane::core
