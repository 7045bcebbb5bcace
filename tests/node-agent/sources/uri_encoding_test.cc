#include "node-agent/sources/uri_encoding.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

// PercentEncode and PercentDecode themselves: tests/core/text/percent_encoding_test.cc.
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
