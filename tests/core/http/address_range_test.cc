// AddressRange parsing (the CIDR forms the source policy's `addresses` accept and refuse),
// which addresses are special-purpose, and AddressPolicy, which the HTTP client applies to every
// address a name resolves to.
#include "core/http/address_range.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/http/address_policy.h"

namespace modelplane::core {
namespace {

using ::testing::HasSubstr;

boost::asio::ip::address Ip(std::string_view text) {
  return boost::asio::ip::make_address(std::string(text));
}

std::string Parsed(std::string_view text) {
  auto range = AddressRange::Parse(text);
  return range ? range->ToString() : "error: " + range.error().message();
}

TEST(AddressRangeTest, ParsesIpv4AndIpv6Ranges) {
  EXPECT_EQ(Parsed("10.0.0.0/8"), "10.0.0.0/8");
  EXPECT_EQ(Parsed("127.0.0.1"), "127.0.0.1/32");
  EXPECT_EQ(Parsed("0.0.0.0/0"), "0.0.0.0/0");
  EXPECT_EQ(Parsed("100.64.0.0/10"), "100.64.0.0/10");
  EXPECT_EQ(Parsed("fd00::/8"), "fd00::/8");
  EXPECT_EQ(Parsed("::1"), "::1/128");
  EXPECT_EQ(Parsed("::/0"), "::/0");
  EXPECT_EQ(Parsed("2001:DB8::/32"), "2001:db8::/32");
  EXPECT_EQ(AddressRange::Parse("10.0.0.0/8")->v4(), true);
  EXPECT_EQ(AddressRange::Parse("fd00::/8")->prefix(), 8U);
}

TEST(AddressRangeTest, AnIpv4MappedRangeIsTheIpv4RangeItMeans) {
  EXPECT_EQ(Parsed("::ffff:10.0.0.0/104"), "10.0.0.0/8");
  EXPECT_EQ(Parsed("::ffff:127.0.0.1"), "127.0.0.1/32");
  EXPECT_EQ(Parsed("::ffff:0.0.0.0/96"), "0.0.0.0/0");
  // Shorter than /96 it spans more than IPv4-mapped addresses: it stays IPv6.
  EXPECT_EQ(Parsed("::ffff:0:0/95"),
            "error: \"::ffff:0:0/95\" is not an address range (CIDR): "
            "bits are set past the /95 prefix");
  EXPECT_EQ(Parsed("::fffe:0:0/95"), "::fffe:0:0/95");
}

TEST(AddressRangeTest, RefusesBadPrefixesAndAddresses) {
  for (const std::string_view bad : {"",
                                     "/8",
                                     "10.0.0.0/",
                                     "10.0.0.0/33",
                                     "::/129",
                                     "10.0.0.0/-1",
                                     "10.0.0.0/+8",
                                     "10.0.0.0/08",
                                     "10.0.0.0/8a",
                                     "10.0.0.0/ 8",
                                     "10.0.0.0/8/8",
                                     "10.0.0.0/1000",
                                     "10.1.2.3/8",
                                     "fd00::1/8",
                                     "10.0.0",
                                     "10.0.0.256/32",
                                     " 10.0.0.0/8",
                                     "example.com/8",
                                     "localhost",
                                     "fe80::1%eth0",
                                     "fe80::%1/64",
                                     "0x0a000000/8"}) {
    auto range = AddressRange::Parse(bad);
    EXPECT_FALSE(range) << "\"" << bad << "\" parsed as " << range->ToString();
    if (!range) {
      EXPECT_EQ(range.error().code(), ErrorCode::kInvalidArgument);
    }
  }
  EXPECT_THAT(AddressRange::Parse("10.0.0.0/33").error().message(),
              HasSubstr("an IPv4 prefix is at most /32"));
  EXPECT_THAT(AddressRange::Parse("::/129").error().message(),
              HasSubstr("an IPv6 prefix is at most /128"));
  EXPECT_THAT(AddressRange::Parse("10.1.2.3/8").error().message(),
              HasSubstr("bits are set past the /8 prefix"));
}

TEST(AddressRangeTest, ContainsMatchesEmbeddedIpv4AsIpv4) {
  const AddressRange loopback = *AddressRange::Parse("127.0.0.0/8");
  EXPECT_TRUE(loopback.Contains(Ip("127.0.0.1")));
  EXPECT_TRUE(loopback.Contains(Ip("127.255.255.255")));
  EXPECT_FALSE(loopback.Contains(Ip("128.0.0.0")));
  EXPECT_TRUE(loopback.Contains(Ip("::ffff:127.0.0.1")));  // mapped
  EXPECT_TRUE(loopback.Contains(Ip("::127.0.0.1")));       // compatible
  EXPECT_TRUE(loopback.Contains(Ip("64:ff9b::7f00:1")));   // NAT64
  EXPECT_FALSE(loopback.Contains(Ip("::1")));              // IPv6's own loopback

  const AddressRange v6_loopback = *AddressRange::Parse("::1/128");
  EXPECT_TRUE(v6_loopback.Contains(Ip("::1")));
  EXPECT_FALSE(v6_loopback.Contains(Ip("127.0.0.1")));

  const AddressRange mapped = *AddressRange::Parse("::ffff:0:0/96");
  EXPECT_TRUE(mapped.Contains(Ip("::ffff:10.0.0.1")));
  EXPECT_TRUE(mapped.Contains(Ip("10.0.0.1")));  // the IPv4 address its spelling reaches

  const AddressRange odd = *AddressRange::Parse("10.1.0.0/17");
  EXPECT_TRUE(odd.Contains(Ip("10.1.127.255")));
  EXPECT_FALSE(odd.Contains(Ip("10.1.128.0")));
}

TEST(AddressPolicyTest, SpecialPurposeAddressesAreRecognisedInEveryForm) {
  for (const std::string_view special : {"0.0.0.0",
                                         "0.1.2.3",
                                         "10.0.0.1",
                                         "100.64.0.1",
                                         "100.127.255.255",
                                         "127.0.0.1",
                                         "127.1.2.3",
                                         "169.254.169.254",
                                         "172.16.0.1",
                                         "172.31.255.255",
                                         "192.0.0.8",
                                         "192.0.2.1",
                                         "192.168.1.1",
                                         "198.18.0.1",
                                         "224.0.0.1",
                                         "239.255.255.250",
                                         "240.0.0.1",
                                         "255.255.255.255",
                                         "::",
                                         "::1",
                                         "fe80::1",
                                         "febf::1",
                                         "fc00::1",
                                         "fd12:3456::1",
                                         "ff02::1",
                                         "fec0::1",
                                         "100::1",
                                         "2001:db8::1",
                                         "2002:7f00:1::1",
                                         "2001:0:4136::1",
                                         "64:ff9b:1::1",
                                         "::ffff:169.254.169.254",
                                         "::ffff:10.0.0.1",
                                         "::ffff:127.0.0.1",
                                         "::ffff:0.0.0.0",
                                         "::a9fe:a9fe",
                                         "::7f00:1",
                                         "64:ff9b::a9fe:a9fe",
                                         "64:ff9b::a00:1"}) {
    EXPECT_TRUE(IsSpecialPurpose(Ip(special))) << special;
  }
  for (const std::string_view global :
       {"8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0",
        "169.253.255.255", "192.169.0.1", "223.255.255.255", "2606:4700:4700::1111", "2a00:1450::1",
        "::ffff:8.8.8.8", "64:ff9b::808:808", "::808:808"}) {
    EXPECT_FALSE(IsSpecialPurpose(Ip(global))) << global;
  }
}

TEST(AddressPolicyTest, AllowsPublicAddressesAndOnlyTheSpecialOnesItNames) {
  const AddressPolicy none;
  EXPECT_TRUE(none.Allows(Ip("8.8.8.8")));
  EXPECT_FALSE(none.Allows(Ip("127.0.0.1")));
  EXPECT_FALSE(none.Allows(Ip("::ffff:169.254.169.254")));

  const AddressPolicy loopback{.allowed = {*AddressRange::Parse("127.0.0.0/8")}};
  EXPECT_TRUE(loopback.Allows(Ip("127.0.0.1")));
  EXPECT_TRUE(loopback.Allows(Ip("::ffff:127.0.0.1")));
  EXPECT_TRUE(loopback.Allows(Ip("8.8.8.8")));
  EXPECT_FALSE(loopback.Allows(Ip("::1")));
  EXPECT_FALSE(loopback.Allows(Ip("10.0.0.1")));
  EXPECT_FALSE(loopback.Allows(Ip("169.254.169.254")));
  EXPECT_EQ(loopback.ToString(), "public+127.0.0.0/8");
  EXPECT_EQ(none.ToString(), "public+");
}

}  // namespace
}  // namespace modelplane::core
