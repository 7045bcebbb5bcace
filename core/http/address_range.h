// An IP address range in CIDR notation ("10.1.0.0/16", "fd00::/8", or one address, which is a
// /32 or /128), as the source policy's `addresses` lists write them, and whether an address a
// resolver returned lies in it.
//
// An IPv6 address that embeds an IPv4 one is matched as the IPv4 address it reaches
// (EffectiveAddress): "127.0.0.0/8" contains ::ffff:127.0.0.1. A range written in IPv4-mapped
// form ("::ffff:10.0.0.0/104") is stored as the IPv4 range it means (10.0.0.0/8).
// Thread safety: a plain value.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/asio/ip/address.hpp>

#include "core/error/error.h"

namespace modelplane::core {

class AddressRange {
 public:
  // kInvalidArgument for: no address, a prefix that is empty, signed, has leading zeros or
  // non-digits, or exceeds the family's width (/32, /128), and an address with bits set past
  // its prefix ("10.1.2.3/8" is a typo for 10.0.0.0/8 or 10.1.2.3/32; refused, not guessed).
  [[nodiscard]] static Result<AddressRange> Parse(std::string_view text);
  // The range holding `address` alone (its effective form).
  [[nodiscard]] static AddressRange Single(const boost::asio::ip::address& address);

  [[nodiscard]] bool Contains(const boost::asio::ip::address& address) const;
  [[nodiscard]] bool v4() const { return v4_; }
  [[nodiscard]] unsigned prefix() const { return prefix_; }
  // "10.0.0.0/8", "fd00::/8".
  [[nodiscard]] std::string ToString() const;

  friend bool operator==(const AddressRange&, const AddressRange&) = default;

 private:
  AddressRange(bool v4, std::array<std::uint8_t, 16> bytes, unsigned prefix)
      : v4_(v4), bytes_(bytes), prefix_(prefix) {}
  [[nodiscard]] bool Matches(const std::array<std::uint8_t, 16>& bytes) const;

  bool v4_ = false;
  std::array<std::uint8_t, 16> bytes_{};  // IPv4: the first 4
  unsigned prefix_ = 0;
};

// The address a connection to `address` reaches: the IPv4 address embedded in an IPv4-mapped
// (::ffff:0:0/96), IPv4-compatible (::/96 but :: and ::1) or NAT64 (64:ff9b::/96) IPv6 address,
// else `address` itself. A DNS answer of ::ffff:169.254.169.254 reaches the metadata service.
[[nodiscard]] boost::asio::ip::address EffectiveAddress(const boost::asio::ip::address& address);

}  // namespace modelplane::core
