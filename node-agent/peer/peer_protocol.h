// The wire contract between peer agents: where a blob lives on a peer server and how a request
// proves it may read it. Shared by PeerServer and PeerRangeSource so the two cannot drift apart.
//
// Thread safety: constants and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/digest/sha256.h"

namespace modelplane::agent {

// GET and HEAD "/v1/blobs/sha256:<64 lower-case hex>".
inline constexpr std::string_view kPeerBlobPathPrefix = "/v1/blobs/";

[[nodiscard]] inline std::string PeerBlobPath(const core::Sha256Bytes& digest) {
  return std::string(kPeerBlobPathPrefix) + core::FormatDigest(digest);
}

// The Authorization scheme of HMAC tokens (see peer_token.h).
inline constexpr std::string_view kPeerTokenScheme = "Modelplane-HMAC";

// A peer's endpoint as it advertises it in ModelCache status and as clients dial it: "host:port",
// an IPv6 host in brackets ("[fd00::7]:7443"). Tokens name it as their audience, so the server
// and its clients must spell it with this one function.
[[nodiscard]] inline std::string FormatPeerEndpoint(std::string_view host, std::uint16_t port) {
  const bool bare_ipv6 = host.find(':') != std::string_view::npos && !host.starts_with('[');
  return bare_ipv6 ? "[" + std::string(host) + "]:" + std::to_string(port)
                   : std::string(host) + ":" + std::to_string(port);
}

}  // namespace modelplane::agent
