// Which addresses a client may connect to: every address outside the special-purpose ranges,
// and a special-purpose address only inside a range the policy names. The node agent applies
// one to each object-store and HTTP-origin source (the source policy rule's `addresses`), so a
// DNS answer cannot point an allowed host name at the node's loopback, the cloud metadata
// service or the cluster's private network (DNS rebinding).
//
// Special-purpose means IANA's special-purpose registries plus multicast and the reserved
// block: this network (0.0.0.0/8), private (10/8, 172.16/12, 192.168/16), shared CGNAT
// (100.64/10), loopback (127/8, ::1), link-local (169.254/16, fe80::/10; the metadata service
// is 169.254.169.254), IETF protocol assignments (192.0.0.0/24), documentation and
// benchmarking ranges, the 6to4 relay (192.88.99.0/24), multicast (224/4, ff00::/8), reserved
// and broadcast (240/4), unspecified (::), discard-only (100::/64), Teredo (2001::/32), 6to4
// (2002::/16), local-use NAT64 (64:ff9b:1::/48), unique-local (fc00::/7) and site-local
// (fec0::/10). Addresses that embed an IPv4 address are judged by it (EffectiveAddress).
// Thread safety: a plain value.
#pragma once

#include <string>
#include <vector>

#include <boost/asio/ip/address.hpp>

#include "core/http/address_range.h"

namespace modelplane::core {

[[nodiscard]] bool IsSpecialPurpose(const boost::asio::ip::address& address);

struct AddressPolicy {
  // Special-purpose addresses inside these may be used; the others never.
  std::vector<AddressRange> allowed;

  [[nodiscard]] bool Allows(const boost::asio::ip::address& address) const;
  // "public+10.0.0.0/8,127.0.0.0/8": equal for policies that allow the same, in the order given.
  [[nodiscard]] std::string ToString() const;
};

}  // namespace modelplane::core
