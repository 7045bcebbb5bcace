#include "node-agent/sources/uri_encoding.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

TEST(UriEncode, KeepsOnlyTheUnreservedSet) {
  EXPECT_EQ(UriEncode("AZaz09-._~", false), "AZaz09-._~");
  EXPECT_EQ(UriEncode(" !*'()+,;=:@&$#?[]%", false),
            "%20%21%2A%27%28%29%2B%2C%3B%3D%3A%40%26%24%23%3F%5B%5D%25");
  EXPECT_EQ(UriEncode("a/b", false), "a%2Fb");
  EXPECT_EQ(UriEncode("a/b", true), "a/b");
}

TEST(UriEncode, EncodesUtf8BytesWithUpperCaseHex) {
  EXPECT_EQ(UriEncode("\xE1\x88\xB4", false), "%E1%88%B4");
  EXPECT_EQ(UriEncode("modèle/权重 1.safetensors", true),
            "mod%C3%A8le/%E6%9D%83%E9%87%8D%201.safetensors");
}

TEST(UriDecode, RoundTripsAndRejectsBrokenEscapes) {
  EXPECT_EQ(UriDecode("a%20b%2Fc%e1%88%b4").value(), "a b/c\xE1\x88\xB4");
  EXPECT_EQ(UriDecode("plus+stays").value(), "plus+stays");
  EXPECT_FALSE(UriDecode("%2").has_value());
  EXPECT_FALSE(UriDecode("%zz").has_value());
  EXPECT_FALSE(UriDecode("abc%").has_value());
  const std::string odd = "ключ with spaces/&=?#";
  EXPECT_EQ(UriDecode(UriEncode(odd, false)).value(), odd);
}

TEST(CanonicalQueryString, SortsByEncodedNameThenValue) {
  EXPECT_EQ(CanonicalQueryString({{"prefix", "a b/"}, {"list-type", "2"}, {"max-keys", "3"}}),
            "list-type=2&max-keys=3&prefix=a%20b%2F");
  EXPECT_EQ(CanonicalQueryString({{"foo", "b"}, {"foo", "a"}, {"Foo", "c"}}), "Foo=c&foo=a&foo=b");
  EXPECT_EQ(CanonicalQueryString({{"acl", ""}}), "acl=");
  EXPECT_EQ(CanonicalQueryString({}), "");
}

TEST(ObjectKeyPath, EncodesEachSegmentOnce) {
  EXPECT_EQ(ObjectKeyPath("models/llama 3/model-00001.safetensors"),
            "/models/llama%203/model-00001.safetensors");
  EXPECT_EQ(ObjectKeyPath("already%20encoded"), "/already%2520encoded");
}

}  // namespace
}  // namespace modelplane::agent
