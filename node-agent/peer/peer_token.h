// Short-lived HMAC tokens that let one node agent read blobs from another without client
// certificates. A token signs one request: HMAC-SHA256(key, "<METHOD>\n<path>\n<expiry>") where
// expiry is a Unix time in seconds, sent as
//   Authorization: Modelplane-HMAC <key-id>:<expiry>:<64 hex mac>
// The key is a shared secret mounted from a Kubernetes Secret; its id (the first 16 hex digits of
// the key's SHA-256) lets a server say which key a client used without revealing it, so a key
// rotation that reached one node before another shows up in logs as "unknown key".
//
// A token is bound to method and path, so it cannot be replayed for another blob; it expires in
// minutes, and a server refuses tokens that claim to live longer than its policy allows, so a
// leaked header is worth little. MACs are compared in constant time.
//
// Thread safety: PeerTokenKey is immutable after Load/FromBytes; every function is thread-safe.
#pragma once

#include <chrono>
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

// The Authorization header value for one request.
[[nodiscard]] std::string SignPeerToken(const PeerTokenKey& key, std::string_view method,
                                        std::string_view path,
                                        std::chrono::system_clock::time_point expiry);

// kUnauthenticated (with the reason) unless `authorization` is a token signed with `key` for this
// method and path that has not expired at `now`.
[[nodiscard]] core::Status VerifyPeerToken(const PeerTokenKey& key, std::string_view authorization,
                                           std::string_view method, std::string_view path,
                                           std::chrono::system_clock::time_point now,
                                           const PeerTokenPolicy& policy);

}  // namespace modelplane::agent
