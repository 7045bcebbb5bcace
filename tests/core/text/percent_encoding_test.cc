#include "core/text/percent_encoding.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

TEST(PercentEncode, KeepsOnlyTheUnreservedSet) {
  EXPECT_EQ(PercentEncode("AZaz09-._~"), "AZaz09-._~");
  EXPECT_EQ(PercentEncode(" !*'()+,;=:@&$#?[]%"),
            "%20%21%2A%27%28%29%2B%2C%3B%3D%3A%40%26%24%23%3F%5B%5D%25");
  EXPECT_EQ(PercentEncode("a/b"), "a%2Fb");
  EXPECT_EQ(PercentEncode("a/b", true), "a/b");
  // What the API server's query parameters meet: selectors and resource versions.
  EXPECT_EQ(PercentEncode("spec.nodeName=gpu-0,app in (a,b)"),
            "spec.nodeName%3Dgpu-0%2Capp%20in%20%28a%2Cb%29");
}

TEST(PercentEncode, EncodesUtf8BytesWithUpperCaseHex) {
  EXPECT_EQ(PercentEncode("\xE1\x88\xB4"), "%E1%88%B4");
  EXPECT_EQ(PercentEncode("modèle/权重 1.safetensors", true),
            "mod%C3%A8le/%E6%9D%83%E9%87%8D%201.safetensors");
  EXPECT_EQ(PercentEncode(std::string_view("\0\xff", 2)), "%00%FF");
}

TEST(PercentDecode, RoundTripsAndRejectsBrokenEscapes) {
  EXPECT_EQ(PercentDecode("a%20b%2Fc%e1%88%b4").value(), "a b/c\xE1\x88\xB4");
  EXPECT_EQ(PercentDecode("plus+stays").value(), "plus+stays");
  EXPECT_EQ(PercentDecode("%41").value(), "A");
  EXPECT_FALSE(PercentDecode("%2").has_value());
  EXPECT_FALSE(PercentDecode("%zz").has_value());
  EXPECT_FALSE(PercentDecode("abc%").has_value());
  const std::string odd = "ключ with spaces/&=?#";
  EXPECT_EQ(PercentDecode(PercentEncode(odd)).value(), odd);
}

}  // namespace
}  // namespace modelplane::core
