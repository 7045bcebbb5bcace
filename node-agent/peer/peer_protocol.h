// The wire contract between peer agents: where a blob lives on a peer server and how a request
// proves it may read it. Shared by PeerServer and PeerRangeSource so the two cannot drift apart.
//
// Thread safety: constants and pure functions.
#pragma once

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

}  // namespace modelplane::agent
