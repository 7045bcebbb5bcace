#include "core/text/hex.h"

#include <array>

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

TEST(Hex, EncodesLowerCaseTwoDigitsPerByte) {
  const std::array<std::uint8_t, 4> bytes{0x00, 0x0f, 0xa5, 0xff};
  EXPECT_EQ(EncodeHex(bytes), "000fa5ff");
  EXPECT_EQ(EncodeHex(std::string_view("\x01\xfe", 2)), "01fe");
  EXPECT_EQ(EncodeHex(std::string_view()), "");
}

TEST(Hex, DecodesEitherCaseOfExactlyTheSizeAsked) {
  std::array<std::uint8_t, 3> out{};
  ASSERT_TRUE(DecodeHex("0aFf10", out));
  EXPECT_EQ(out, (std::array<std::uint8_t, 3>{0x0a, 0xff, 0x10}));
  EXPECT_FALSE(DecodeHex("0aff1", out));     // short
  EXPECT_FALSE(DecodeHex("0aff1000", out));  // long
  EXPECT_FALSE(DecodeHex("0aff1g", out));    // not a digit
  EXPECT_FALSE(DecodeHex("+aff10", out));    // from_chars would take a sign; this does not
  EXPECT_FALSE(DecodeHex(" aff10", out));
}

TEST(Hex, RoundTrips) {
  std::array<std::uint8_t, 256> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i);
  std::array<std::uint8_t, 256> back{};
  ASSERT_TRUE(DecodeHex(EncodeHex(bytes), back));
  EXPECT_EQ(back, bytes);
}

}  // namespace
}  // namespace modelplane::core
