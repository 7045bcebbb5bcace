#include "node-agent/peer/peer_token.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <optional>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "core/digest/sha256.h"
#include "core/io/bounded_file.h"
#include "core/text/hex.h"
#include "node-agent/peer/peer_protocol.h"

namespace modelplane::agent {
namespace {

using Mac = std::array<std::uint8_t, 32>;

// Larger key files are a mistake (a certificate bundle, a directory listing), not a key.
constexpr std::size_t kMaxKeyFileBytes = 4096;

// The version leads the signed message too, so a MAC of one format can never pass as another's.
// No field can hold a newline (the audience is checked, method and path come from a request
// line), so the message is unambiguous.
Mac ComputeMac(const PeerTokenKey& key, const PeerTokenScope& scope, std::int64_t expiry) {
  const std::string message =
      fmt::format("modelplane-peer-token-{}\n{}\n{}\n{}\n{}", kPeerTokenVersion, scope.method,
                  scope.audience, scope.path, expiry);
  Mac mac{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.secret().data(), static_cast<int>(key.secret().size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac.data(), &length);
  return mac;
}

std::optional<Mac> ParseHexMac(std::string_view text) {
  Mac mac{};
  if (!core::DecodeHex(text, mac)) return std::nullopt;
  return mac;
}

// The text before the next ':' (consumed with it), or nullopt when there is no ':'.
std::optional<std::string_view> TakeField(std::string_view& rest) {
  const std::size_t colon = rest.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view field = rest.substr(0, colon);
  rest.remove_prefix(colon + 1);
  return field;
}

// The first format's tokens began with the key id: 16 lower-case hex digits.
bool LooksLikeKeyId(std::string_view text) {
  return text.size() == 16 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::int64_t UnixSeconds(std::chrono::system_clock::time_point time) {
  return std::chrono::duration_cast<std::chrono::seconds>(time.time_since_epoch()).count();
}

std::unexpected<core::Error> Refuse(std::string_view reason) {
  return core::MakeError(core::ErrorCode::kUnauthenticated, fmt::format("peer token {}", reason));
}

}  // namespace

core::Result<PeerTokenKey> PeerTokenKey::Load(const std::string& path) {
  auto read = core::ReadBoundedFile(path, kMaxKeyFileBytes);
  if (!read) return std::unexpected(read.error().Wrap("reading the peer token key"));
  std::string secret = *std::move(read);
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r' ||
                             secret.back() == ' ' || secret.back() == '\t')) {
    secret.pop_back();
  }
  auto key = FromBytes(std::move(secret));
  if (!key) return std::unexpected(key.error().Wrap(path));
  return key;
}

core::Result<PeerTokenKey> PeerTokenKey::FromBytes(std::string secret) {
  if (secret.size() < kMinPeerTokenKeyBytes) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           fmt::format("peer token key has {} bytes, needs at least {}",
                                       secret.size(), kMinPeerTokenKeyBytes));
  }
  std::string id = core::Sha256HexOf(secret).substr(0, 16);
  return PeerTokenKey(std::move(secret), std::move(id));
}

bool IsValidPeerTokenAudience(std::string_view audience) {
  return !audience.empty() && audience.size() <= kMaxPeerTokenAudienceBytes &&
         std::all_of(audience.begin(), audience.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

std::string SignPeerToken(const PeerTokenKey& key, const PeerTokenScope& scope,
                          std::chrono::system_clock::time_point expiry) {
  const std::int64_t seconds = UnixSeconds(expiry);
  const Mac mac = ComputeMac(key, scope, seconds);
  return fmt::format("{} {}:{}:{}:{}:{}", kPeerTokenScheme, kPeerTokenVersion, key.id(), seconds,
                     core::EncodeHex(mac), scope.audience);
}

core::Status VerifyPeerToken(const PeerTokenKey& key, std::string_view authorization,
                             const PeerTokenScope& scope, std::chrono::system_clock::time_point now,
                             const PeerTokenPolicy& policy) {
  if (authorization.empty()) return Refuse("missing");
  if (!authorization.starts_with(kPeerTokenScheme) ||
      authorization.substr(kPeerTokenScheme.size(), 1) != " ") {
    return Refuse("has another scheme");
  }
  // "v2:<key-id>:<expiry>:<mac>:<audience>": the audience comes last, it holds colons itself.
  std::string_view rest = authorization.substr(kPeerTokenScheme.size() + 1);
  const std::optional<std::string_view> version = TakeField(rest);
  if (!version) return Refuse("is malformed");
  if (*version != kPeerTokenVersion) {
    if (LooksLikeKeyId(*version)) {
      return Refuse(fmt::format(
          "has the retired v1 format, which names no audience (is the client's agent older?); "
          "this peer accepts {} only",
          kPeerTokenVersion));
    }
    return Refuse(
        fmt::format("has an unknown format version; this peer accepts {} only", kPeerTokenVersion));
  }
  const std::optional<std::string_view> key_id = TakeField(rest);
  const std::optional<std::string_view> expiry_text = TakeField(rest);
  const std::optional<std::string_view> mac_text = TakeField(rest);
  if (!key_id || !expiry_text || !mac_text) return Refuse("is malformed");
  const std::string_view audience = rest;
  const std::optional<Mac> mac = ParseHexMac(*mac_text);
  std::int64_t expiry = 0;
  const auto [end, error] =
      std::from_chars(expiry_text->data(), expiry_text->data() + expiry_text->size(), expiry);
  if (!mac || error != std::errc() || end != expiry_text->data() + expiry_text->size() ||
      !IsValidPeerTokenAudience(audience)) {
    return Refuse("is malformed");
  }
  if (*key_id != key.id()) return Refuse(fmt::format("names unknown key {}", *key_id));
  // The MAC is over the audience the token names, so a mismatch below is known to be genuine:
  // a token replayed from another peer, or a client that dials this one by another name.
  const Mac expected =
      ComputeMac(key, {.audience = audience, .method = scope.method, .path = scope.path}, expiry);
  if (CRYPTO_memcmp(expected.data(), mac->data(), expected.size()) != 0) {
    return Refuse("signature does not match this request");
  }
  if (audience != scope.audience) {
    return Refuse(fmt::format("is for peer {}, not this peer ({})", audience, scope.audience));
  }
  // Checked after the MAC so that an attacker learns nothing about the policy from forgeries.
  const std::int64_t now_seconds = UnixSeconds(now);
  if (expiry + policy.clock_skew.count() < now_seconds) return Refuse("expired");
  if (expiry > now_seconds + policy.max_lifetime.count() + policy.clock_skew.count()) {
    return Refuse("lives longer than allowed");
  }
  return core::Ok();
}

}  // namespace modelplane::agent
