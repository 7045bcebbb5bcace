#include "core/http/byte_range.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

using Kind = RangeDecision::Kind;

TEST(ByteRangeTest, ResolvesSingleRanges) {
  EXPECT_EQ(ResolveRange("bytes=0-9", 100).range, (ByteRange{0, 9}));
  EXPECT_EQ(ResolveRange("bytes=90-", 100).range, (ByteRange{90, 99}));
  EXPECT_EQ(ResolveRange("bytes=90-1000", 100).range, (ByteRange{90, 99}));
  EXPECT_EQ(ResolveRange("bytes=-10", 100).range, (ByteRange{90, 99}));
  EXPECT_EQ(ResolveRange("bytes=-1000", 100).range, (ByteRange{0, 99}));
  EXPECT_EQ(ResolveRange("bytes=5-5", 100).kind, Kind::kPartial);
}

TEST(ByteRangeTest, UnsatisfiableAndIgnored) {
  EXPECT_EQ(ResolveRange("bytes=100-", 100).kind, Kind::kUnsatisfiable);
  EXPECT_EQ(ResolveRange("bytes=-0", 100).kind, Kind::kUnsatisfiable);
  EXPECT_EQ(ResolveRange("bytes=0-", 0).kind, Kind::kUnsatisfiable);
  EXPECT_EQ(ResolveRange("bytes=9-5", 100).kind, Kind::kWhole);
  EXPECT_EQ(ResolveRange("bytes=0-1,5-6", 100).kind, Kind::kWhole);
  EXPECT_EQ(ResolveRange("items=0-1", 100).kind, Kind::kWhole);
  EXPECT_EQ(ResolveRange("bytes=a-b", 100).kind, Kind::kWhole);
  EXPECT_EQ(ResolveRange("bytes=-", 100).kind, Kind::kWhole);
}

TEST(ByteRangeTest, ContentRangeRoundTrip) {
  EXPECT_EQ(FormatRangeHeader(5, 9), "bytes=5-9");
  EXPECT_EQ(FormatRangeHeader(5, std::nullopt), "bytes=5-");
  const auto parsed = ParseContentRange(FormatContentRange({10, 19}, 100));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->range, (ByteRange{10, 19}));
  EXPECT_EQ(parsed->size, 100U);
  EXPECT_TRUE(ParseContentRange("bytes 0-9/*"));
  EXPECT_FALSE(ParseContentRange("bytes 0-9/5"));
  EXPECT_FALSE(ParseContentRange("bytes */100"));
}

}  // namespace
}  // namespace modelplane::core
