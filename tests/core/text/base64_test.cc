#include "core/text/base64.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

TEST(Base64Test, EncodesWithPadding) {
  EXPECT_EQ(EncodeBase64(""), "");
  EXPECT_EQ(EncodeBase64("f"), "Zg==");
  EXPECT_EQ(EncodeBase64("fo"), "Zm8=");
  EXPECT_EQ(EncodeBase64("foo"), "Zm9v");
  EXPECT_EQ(EncodeBase64(std::string("\xff\x00\xfe", 3)), "/wD+");
}

TEST(Base64Test, RoundTripsEveryByte) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  auto decoded = DecodeBase64(EncodeBase64(bytes), "data");
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_EQ(*decoded, bytes);
}

TEST(Base64Test, IgnoresLineBreaks) {
  auto decoded = DecodeBase64("Zm9v\nYmFy\r\n", "data");
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, "foobar");
}

TEST(Base64Test, RefusesWhatIsNotBase64) {
  for (const char* text : {"Zm9", "Zm9v!", "Z=9v", "Zg===", "====", "Zm9v====", "Zg=a"}) {
    auto decoded = DecodeBase64(text, "certificate-authority-data");
    ASSERT_FALSE(decoded) << text;
    EXPECT_EQ(decoded.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(decoded.error().message().find("certificate-authority-data"), std::string::npos);
  }
}

}  // namespace
}  // namespace modelplane::core
