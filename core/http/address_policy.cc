#include "core/http/address_policy.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace modelplane::core {
namespace {

std::vector<AddressRange> ParseAll(std::initializer_list<std::string_view> texts) {
  std::vector<AddressRange> ranges;
  ranges.reserve(texts.size());
  for (const std::string_view text : texts) ranges.push_back(*AddressRange::Parse(text));
  return ranges;
}

const std::vector<AddressRange>& SpecialPurposeRanges() {
  static const std::vector<AddressRange> ranges = ParseAll({
      "0.0.0.0/8",     "10.0.0.0/8",      "100.64.0.0/10",  "127.0.0.0/8",    "169.254.0.0/16",
      "172.16.0.0/12", "192.0.0.0/24",    "192.0.2.0/24",   "192.88.99.0/24", "192.168.0.0/16",
      "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4",    "240.0.0.0/4",
      "::/128",        "::1/128",         "64:ff9b:1::/48", "100::/64",       "2001::/32",
      "2001:2::/48",   "2001:db8::/32",   "2002::/16",      "3fff::/20",      "fc00::/7",
      "fe80::/10",     "fec0::/10",       "ff00::/8",
  });
  return ranges;
}

}  // namespace

bool IsSpecialPurpose(const boost::asio::ip::address& address) {
  return std::ranges::any_of(SpecialPurposeRanges(),
                             [&](const AddressRange& range) { return range.Contains(address); });
}

bool AddressPolicy::Allows(const boost::asio::ip::address& address) const {
  if (!IsSpecialPurpose(address)) return true;
  return std::ranges::any_of(allowed,
                             [&](const AddressRange& range) { return range.Contains(address); });
}

std::string AddressPolicy::ToString() const {
  std::vector<std::string> ranges;
  ranges.reserve(allowed.size());
  for (const AddressRange& range : allowed) ranges.push_back(range.ToString());
  return fmt::format("public+{}", fmt::join(ranges, ","));
}

}  // namespace modelplane::core
