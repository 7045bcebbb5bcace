#include "core/api/source_location_rules.h"

#include <string>

#include <gtest/gtest.h>

namespace modelplane::core::api {
namespace {

TEST(SourceLocationRulesTest, EndpointsNameAHostAndPortOnly) {
  for (const char* good :
       {"https://s3.us-east-1.amazonaws.com", "http://127.0.0.1:9000", "http://minio:9000/",
        "http://MinIO.example:9000", "https://[fd00::1]:9000", "http://[::1]"}) {
    EXPECT_EQ(CheckEndpointUrl(good), "") << good;
  }
  for (const char* bad :
       {"s3.amazonaws.com", "ftp://host", "http://", "http://user:pw@host", "http://host:0",
        "http://host:65536", "http://host:", "http://host:80x", "http://host/base",
        "http://host?x=1", "http://host#frag", "http://ho st", "http://-host", "http://host_1",
        "http://host..example", "http://[fd00::1", "http://[zz::1]", "http://[::1]x",
        "http://evil.example\\@s3.amazonaws.com"}) {
    EXPECT_NE(CheckEndpointUrl(bad), "") << bad;
  }
}

TEST(SourceLocationRulesTest, BaseUrlsMayHaveAPlainPath) {
  for (const char* good :
       {"https://huggingface.co/org/model/resolve/abc123", "http://127.0.0.1:8080",
        "http://origin:8080/models/", "http://h/a%20b"}) {
    EXPECT_EQ(CheckBaseUrl(good), "") << good;
  }
  for (const char* bad :
       {"http://h/a/../b", "http://h/./a", "http://h//a", "http://h/a b", "http://h/a?x",
        "http://h/a#x", "http://h/a\\b", "http://h/\x01", "http://u@h/a", "https://h:99999/a"}) {
    EXPECT_NE(CheckBaseUrl(bad), "") << bad;
  }
}

// The finding: a region went into s3.<region>.amazonaws.com, so ':' or '#' in it chose the host
// and port a signed request went to.
TEST(SourceLocationRulesTest, RegionsAreDnsLabels) {
  for (const char* good : {"us-east-1", "auto", "eu-central-2", "fr-par"}) {
    EXPECT_EQ(CheckRegion(good), "") << good;
  }
  for (const char* bad :
       {"", "evil.example:443#", "us-east-1.evil", "US-EAST-1", "-us", "us-", "a/b", "x y"}) {
    EXPECT_NE(CheckRegion(bad), "") << bad;
  }
  EXPECT_NE(CheckRegion(std::string(64, 'a')), "");
}

TEST(SourceLocationRulesTest, BucketsFollowS3sRules) {
  for (const char* good : {"models", "my.bucket-1", "abc"})
    EXPECT_EQ(CheckBucket(good), "") << good;
  for (const char* bad : {"ab", "Models", "my_bucket", "-models", "models-", "my..bucket",
                          "192.168.1.1", "a/b", "evil.example:443"}) {
    EXPECT_NE(CheckBucket(bad), "") << bad;
  }
  EXPECT_NE(CheckBucket(std::string(64, 'a')), "");
}

TEST(SourceLocationRulesTest, PrefixesAreRelativeKeyPaths) {
  for (const char* good : {"", "models/llama/", "models/llama", "a-b_c.d/e"}) {
    EXPECT_EQ(CheckObjectPrefix(good), "") << good;
  }
  for (const char* bad :
       {"/models", "models/../secrets", "./x", "a//b", "a b", "a?x", "a#x", "a\\b", "a\nb"}) {
    EXPECT_NE(CheckObjectPrefix(bad), "") << bad;
  }
}

}  // namespace
}  // namespace modelplane::core::api
