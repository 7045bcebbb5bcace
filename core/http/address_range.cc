#include "core/http/address_range.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace modelplane::core {
namespace {

namespace ip = boost::asio::ip;

std::array<std::uint8_t, 16> Widened(const ip::address_v4& address) {
  std::array<std::uint8_t, 16> bytes{};
  const auto v4 = address.to_bytes();
  std::copy(v4.begin(), v4.end(), bytes.begin());
  return bytes;
}

std::array<std::uint8_t, 16> Bytes(const ip::address_v6& address) {
  const auto v6 = address.to_bytes();
  std::array<std::uint8_t, 16> bytes{};
  std::copy(v6.begin(), v6.end(), bytes.begin());
  return bytes;
}

// True when the first `prefix` bits of `a` and `b` agree.
bool SamePrefix(const std::array<std::uint8_t, 16>& a, const std::array<std::uint8_t, 16>& b,
                unsigned prefix) {
  const unsigned whole = prefix / 8;
  if (!std::equal(a.begin(), a.begin() + whole, b.begin())) return false;
  const unsigned rest = prefix % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<std::uint8_t>(0xFF << (8 - rest));
  return (a[whole] & mask) == (b[whole] & mask);
}

// True when no bit past `prefix` is set.
bool HostBitsClear(const std::array<std::uint8_t, 16>& bytes, unsigned prefix) {
  std::array<std::uint8_t, 16> network{};
  for (unsigned bit = 0; bit < prefix; ++bit) {
    network[bit / 8] =
        static_cast<std::uint8_t>(network[bit / 8] | (bytes[bit / 8] & (0x80 >> (bit % 8))));
  }
  return network == bytes;
}

Error Invalid(std::string_view text, std::string_view problem) {
  return Error(ErrorCode::kInvalidArgument,
               fmt::format("\"{}\" is not an address range (CIDR): {}", text, problem));
}

}  // namespace

ip::address EffectiveAddress(const ip::address& address) {
  if (!address.is_v6()) return address;
  const ip::address_v6 v6 = address.to_v6();
  if (v6.is_v4_mapped()) return ip::make_address_v4(ip::v4_mapped, v6);
  const auto bytes = v6.to_bytes();
  const auto embedded = [&] {
    return ip::address_v4(ip::address_v4::bytes_type{bytes[12], bytes[13], bytes[14], bytes[15]});
  };
  // 64:ff9b::/96, the NAT64 well-known prefix: a translator carries it to the IPv4 address.
  static constexpr std::array<std::uint8_t, 12> kNat64{0x00, 0x64, 0xff, 0x9b};
  if (std::equal(kNat64.begin(), kNat64.end(), bytes.begin())) return embedded();
  // ::/96 (IPv4-compatible, deprecated) except :: and ::1, which are IPv6's own.
  const bool compatible =
      std::all_of(bytes.begin(), bytes.begin() + 12, [](std::uint8_t byte) { return byte == 0; });
  if (compatible && !v6.is_unspecified() && !v6.is_loopback()) return embedded();
  return address;
}

Result<AddressRange> AddressRange::Parse(std::string_view text) {
  const std::size_t slash = text.find('/');
  const std::string_view address_text = text.substr(0, slash);
  if (address_text.empty()) return std::unexpected(Invalid(text, "no address"));
  if (address_text.find('%') != std::string_view::npos) {
    return std::unexpected(Invalid(text, "a zone index (%) has no place in a range"));
  }
  boost::system::error_code error;
  const ip::address address = ip::make_address(std::string(address_text), error);
  if (error) return std::unexpected(Invalid(text, "not an IPv4 or IPv6 address"));
  const unsigned width = address.is_v4() ? 32 : 128;
  unsigned prefix = width;
  if (slash != std::string_view::npos) {
    const std::string_view digits = text.substr(slash + 1);
    if (digits.empty() || digits.size() > 3 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        (digits.size() > 1 && digits.front() == '0')) {
      return std::unexpected(Invalid(text, "the prefix length must be a decimal number"));
    }
    (void)std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
    if (prefix > width) {
      return std::unexpected(
          Invalid(text, fmt::format("an IPv{} prefix is at most /{}", width == 32 ? 4 : 6, width)));
    }
  }
  std::array<std::uint8_t, 16> bytes =
      address.is_v4() ? Widened(address.to_v4()) : Bytes(address.to_v6());
  if (!HostBitsClear(bytes, prefix)) {
    return std::unexpected(Invalid(text, fmt::format("bits are set past the /{} prefix", prefix)));
  }
  if (address.is_v6() && address.to_v6().is_v4_mapped() && prefix >= 96) {
    return AddressRange(true, Widened(ip::make_address_v4(ip::v4_mapped, address.to_v6())),
                        prefix - 96);
  }
  return AddressRange(address.is_v4(), bytes, prefix);
}

AddressRange AddressRange::Single(const ip::address& address) {
  const ip::address effective = EffectiveAddress(address);
  if (effective.is_v4()) return AddressRange(true, Widened(effective.to_v4()), 32);
  return AddressRange(false, Bytes(effective.to_v6()), 128);
}

bool AddressRange::Matches(const std::array<std::uint8_t, 16>& bytes) const {
  return SamePrefix(bytes_, bytes, prefix_);
}

bool AddressRange::Contains(const ip::address& address) const {
  const ip::address effective = EffectiveAddress(address);
  if (v4_) return effective.is_v4() && Matches(Widened(effective.to_v4()));
  // An IPv6 range also holds the IPv6 spelling of what it covers (::ffff:0:0/96 holds
  // ::ffff:10.0.0.1), so it is matched against the address as written too.
  if (address.is_v6() && Matches(Bytes(address.to_v6()))) return true;
  return effective.is_v6() && Matches(Bytes(effective.to_v6()));
}

std::string AddressRange::ToString() const {
  if (v4_) {
    const ip::address_v4 address(
        ip::address_v4::bytes_type{bytes_[0], bytes_[1], bytes_[2], bytes_[3]});
    return fmt::format("{}/{}", address.to_string(), prefix_);
  }
  ip::address_v6::bytes_type raw{};
  std::copy(bytes_.begin(), bytes_.end(), raw.begin());
  return fmt::format("{}/{}", ip::address_v6(raw).to_string(), prefix_);
}

}  // namespace modelplane::core
