// Short-lived HMAC tokens that let one node agent read blobs from another without client
// certificates. A token signs one request to one peer:
//   HMAC-SHA256(key, "modelplane-peer-token-v2\n<METHOD>\n<audience>\n<path>\n<expiry>")
// where the audience is the endpoint of the peer being called ("host:port" as that peer
// advertises it, see FormatPeerEndpoint) and expiry is a Unix time in seconds, sent as
//   Authorization: Modelplane-HMAC v2:<key-id>:<expiry>:<64 hex mac>:<audience>
// The key is a shared secret mounted from a Kubernetes Secret; its id (the first 16 hex digits of
// the key's SHA-256) lets a server say which key a client used without revealing it, so a key
// rotation that reached one node before another shows up in logs as "unknown key".
//
// A token is bound to method, path and audience, so it cannot be replayed for another blob nor
// at another peer (every peer holds the same key, so without the audience a token captured at one
// would open all of them); it expires in minutes, and a server refuses tokens that claim to live
// longer than its policy allows, so a leaked header is worth little. MACs are compared in
// constant time. The audience travels in clear too (the MAC covers it) so that a refusal can say
// which peer a token was meant for. Tokens of the first, unversioned format (no audience) are
// refused.
//
// Thread safety: PeerTokenKey is immutable after Load/FromBytes; every function is thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "core/error/error.h"

namespace modelplane::agent {

// Shorter keys are refused: the MAC is only as strong as the secret.
inline constexpr std::size_t kMinPeerTokenKeyBytes = 32;

class PeerTokenKey {
 public:
  // Reads the whole file; trailing newlines and spaces (left by `echo` or an editor) are dropped.
  [[nodiscard]] static core::Result<PeerTokenKey> Load(const std::string& path);
  [[nodiscard]] static core::Result<PeerTokenKey> FromBytes(std::string secret);

  [[nodiscard]] const std::string& id() const { return id_; }
  [[nodiscard]] const std::string& secret() const { return secret_; }

 private:
  PeerTokenKey(std::string secret, std::string id)
      : secret_(std::move(secret)), id_(std::move(id)) {}
  std::string secret_;
  std::string id_;
};

struct PeerTokenPolicy {
  // Clocks of two nodes disagree by this much at most (NTP keeps them far closer).
  std::chrono::seconds clock_skew{30};
  // Tokens whose expiry lies further ahead than this (plus skew) are refused.
  std::chrono::seconds max_lifetime{300};
};

// The format this build signs and the only one it accepts.
inline constexpr std::string_view kPeerTokenVersion = "v2";
// An audience is a host (at most 253 bytes, or a bracketed IPv6 address) and a port.
inline constexpr std::size_t kMaxPeerTokenAudienceBytes = 300;

// What one token is good for: one request to one peer.
struct PeerTokenScope {
  std::string_view audience;  // the called peer's endpoint, FormatPeerEndpoint's spelling
  std::string_view method;    // "GET" or "HEAD"
  std::string_view path;      // "/v1/blobs/sha256:<hex>"
};

// True for an audience a token can carry: 1 to kMaxPeerTokenAudienceBytes visible ASCII
// characters (no spaces or control characters, which could not travel in a header).
[[nodiscard]] bool IsValidPeerTokenAudience(std::string_view audience);

// The Authorization header value for one request. `scope.audience` must be valid (see above).
[[nodiscard]] std::string SignPeerToken(const PeerTokenKey& key, const PeerTokenScope& scope,
                                        std::chrono::system_clock::time_point expiry);

// kUnauthenticated (with the reason) unless `authorization` is a v2 token signed with `key` for
// this method, path and audience (the verifying server's own endpoint) that has not expired at
// `now`.
[[nodiscard]] core::Status VerifyPeerToken(const PeerTokenKey& key, std::string_view authorization,
                                           const PeerTokenScope& scope,
                                           std::chrono::system_clock::time_point now,
                                           const PeerTokenPolicy& policy);

}  // namespace modelplane::agent
