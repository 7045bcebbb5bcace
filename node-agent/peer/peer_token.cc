#include "node-agent/peer/peer_token.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <optional>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "core/digest/sha256.h"
#include "node-agent/peer/peer_protocol.h"

namespace modelplane::agent {
namespace {

using Mac = std::array<std::uint8_t, 32>;

// Larger key files are a mistake (a certificate bundle, a directory listing), not a key.
constexpr std::size_t kMaxKeyFileBytes = 4096;

Mac ComputeMac(const PeerTokenKey& key, std::string_view method, std::string_view path,
               std::int64_t expiry) {
  const std::string message = fmt::format("{}\n{}\n{}", method, path, expiry);
  Mac mac{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.secret().data(), static_cast<int>(key.secret().size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac.data(), &length);
  return mac;
}

std::optional<Mac> ParseHexMac(std::string_view text) {
  if (text.size() != 64) return std::nullopt;
  Mac mac{};
  for (std::size_t i = 0; i < mac.size(); ++i) {
    const auto begin = text.data() + 2 * i;
    const auto [end, error] = std::from_chars(begin, begin + 2, mac[i], 16);
    if (error != std::errc() || end != begin + 2) return std::nullopt;
  }
  return mac;
}

std::int64_t UnixSeconds(std::chrono::system_clock::time_point time) {
  return std::chrono::duration_cast<std::chrono::seconds>(time.time_since_epoch()).count();
}

std::unexpected<core::Error> Refuse(std::string_view reason) {
  return core::MakeError(core::ErrorCode::kUnauthenticated, fmt::format("peer token {}", reason));
}

}  // namespace

core::Result<PeerTokenKey> PeerTokenKey::Load(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return core::MakeError(core::ErrorCode::kIo, "cannot open peer token key " + path);
  std::string secret;
  secret.resize(kMaxKeyFileBytes + 1);
  file.read(secret.data(), static_cast<std::streamsize>(secret.size()));
  if (file.bad())
    return core::MakeError(core::ErrorCode::kIo, "cannot read peer token key " + path);
  secret.resize(static_cast<std::size_t>(file.gcount()));
  if (secret.size() > kMaxKeyFileBytes) {
    return core::MakeError(
        core::ErrorCode::kInvalidArgument,
        fmt::format("peer token key {} is over {} bytes", path, kMaxKeyFileBytes));
  }
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

std::string SignPeerToken(const PeerTokenKey& key, std::string_view method, std::string_view path,
                          std::chrono::system_clock::time_point expiry) {
  const std::int64_t seconds = UnixSeconds(expiry);
  const Mac mac = ComputeMac(key, method, path, seconds);
  return fmt::format("{} {}:{}:{}", kPeerTokenScheme, key.id(), seconds, core::ToHex(mac));
}

core::Status VerifyPeerToken(const PeerTokenKey& key, std::string_view authorization,
                             std::string_view method, std::string_view path,
                             std::chrono::system_clock::time_point now,
                             const PeerTokenPolicy& policy) {
  if (authorization.empty()) return Refuse("missing");
  if (!authorization.starts_with(kPeerTokenScheme) ||
      authorization.substr(kPeerTokenScheme.size(), 1) != " ") {
    return Refuse("has another scheme");
  }
  const std::string_view token = authorization.substr(kPeerTokenScheme.size() + 1);
  const std::size_t first = token.find(':');
  const std::size_t second = first == std::string_view::npos ? first : token.find(':', first + 1);
  if (second == std::string_view::npos) return Refuse("is malformed");
  const std::string_view key_id = token.substr(0, first);
  const std::string_view expiry_text = token.substr(first + 1, second - first - 1);
  const std::optional<Mac> mac = ParseHexMac(token.substr(second + 1));
  std::int64_t expiry = 0;
  const auto [end, error] =
      std::from_chars(expiry_text.data(), expiry_text.data() + expiry_text.size(), expiry);
  if (!mac || error != std::errc() || end != expiry_text.data() + expiry_text.size()) {
    return Refuse("is malformed");
  }
  if (key_id != key.id()) return Refuse(fmt::format("names unknown key {}", key_id));
  const Mac expected = ComputeMac(key, method, path, expiry);
  if (CRYPTO_memcmp(expected.data(), mac->data(), expected.size()) != 0) {
    return Refuse("signature does not match this request");
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
