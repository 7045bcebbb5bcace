#include "core/api/quantity.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

std::int64_t Milli(const char* text) {
  auto parsed = ParseMilliQuantity(text);
  EXPECT_TRUE(parsed) << text << ": " << (parsed ? "" : parsed.error().ToString());
  return parsed.value_or(-1);
}

TEST(QuantityTest, PlainAndDecimalSuffixes) {
  EXPECT_EQ(Milli("0"), 0);
  EXPECT_EQ(Milli("1"), 1000);
  EXPECT_EQ(Milli("8"), 8000);
  EXPECT_EQ(Milli("500m"), 500);
  EXPECT_EQ(Milli("1.5"), 1500);
  EXPECT_EQ(Milli("+2"), 2000);
  EXPECT_EQ(Milli("2k"), 2'000'000);
  EXPECT_EQ(Milli("3M"), 3'000'000'000);
  EXPECT_EQ(Milli("1G"), 1'000'000'000'000);
  EXPECT_EQ(Milli(".5"), 500);
}

TEST(QuantityTest, BinarySuffixes) {
  EXPECT_EQ(Milli("1Ki"), 1'024'000);
  EXPECT_EQ(Milli("512Gi"), 512LL * 1024 * 1024 * 1024 * 1000);
  EXPECT_EQ(Milli("1.5Mi"), 1'572'864'000);
}

TEST(QuantityTest, Exponents) {
  EXPECT_EQ(Milli("1e3"), 1'000'000);
  EXPECT_EQ(Milli("1E3"), 1'000'000);
  EXPECT_EQ(Milli("25e-3"), 25);
}

TEST(QuantityTest, RoundsUpToAThousandth) {
  EXPECT_EQ(Milli("1n"), 1);
  EXPECT_EQ(Milli("1500u"), 2);
  EXPECT_EQ(Milli("0.0001"), 1);
}

TEST(QuantityTest, Saturates) {
  EXPECT_EQ(Milli("100Ei"), kMaxMilliQuantity);
  EXPECT_EQ(Milli("1e300"), kMaxMilliQuantity);
  EXPECT_EQ(Milli("99999999999999999999999999999999999999999"), kMaxMilliQuantity);
}

TEST(QuantityTest, RefusesWhatIsNotAQuantity) {
  for (const char* text :
       {"", "m", "Gi", "-1", "1.2.3", "1Gb", "1 Gi", "1e", "1e1000", "abc", "1K", "0x10"}) {
    auto parsed = ParseMilliQuantity(text);
    EXPECT_FALSE(parsed) << text;
    if (!parsed) {
      EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument);
    }
  }
}

}  // namespace
}  // namespace modelplane::core
