#include "node-agent/peer/peer_token.h"

#include <fstream>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <gtest/gtest.h>

#include "core/digest/sha256.h"
#include "node-agent/peer/peer_protocol.h"
#include "tests/core/http/test_certificates.h"

namespace modelplane::agent {
namespace {

using namespace std::chrono_literals;
using std::chrono::system_clock;

// NOLINTNEXTLINE(cert-err58-cpp): a test constant; a throw before main ends the test anyway
const std::string kPath = "/v1/blobs/sha256:" + std::string(64, 'a');

PeerTokenKey Key(char fill) {
  auto key = PeerTokenKey::FromBytes(std::string(40, fill));
  EXPECT_TRUE(key);
  return *key;
}

constexpr std::string_view kPeerA = "10.0.0.7:7443";
constexpr std::string_view kPeerB = "10.0.0.8:7443";

PeerTokenScope ScopeAt(std::string_view audience, std::string_view method = "GET",
                       std::string_view path = kPath) {
  return {.audience = audience, .method = method, .path = path};
}

// kUnauthenticated, with `reason` in its message.
::testing::AssertionResult RefusedFor(const core::Status& result, std::string_view reason) {
  if (result) return ::testing::AssertionFailure() << "accepted";
  if (result.error().code() != core::ErrorCode::kUnauthenticated) {
    return ::testing::AssertionFailure() << "not kUnauthenticated: " << result.error().ToString();
  }
  if (result.error().message().find(reason) == std::string::npos) {
    return ::testing::AssertionFailure()
           << "reason is not \"" << reason << "\": " << result.error().ToString();
  }
  return ::testing::AssertionSuccess();
}

TEST(PeerTokenTest, VerifiesWhatItSignedAndNothingElse) {
  const PeerTokenKey key = Key('a');
  const auto now = system_clock::now();
  const PeerTokenPolicy policy;
  const std::string token = SignPeerToken(key, ScopeAt(kPeerA), now + 2min);
  EXPECT_TRUE(token.starts_with("Modelplane-HMAC v2:" + key.id() + ":")) << token;
  EXPECT_TRUE(token.ends_with(":10.0.0.7:7443")) << token;
  EXPECT_TRUE(VerifyPeerToken(key, token, ScopeAt(kPeerA), now, policy));

  const auto verify = [&](std::string_view value, const PeerTokenScope& scope,
                          system_clock::time_point at) {
    return VerifyPeerToken(key, value, scope, at, policy);
  };
  const auto mismatch = "signature does not match";
  EXPECT_TRUE(RefusedFor(verify(token, ScopeAt(kPeerA, "HEAD"), now), mismatch));
  EXPECT_TRUE(RefusedFor(verify(token, ScopeAt(kPeerA, "GET", kPath + "b"), now), mismatch));
  EXPECT_TRUE(
      RefusedFor(verify(SignPeerToken(Key('b'), ScopeAt(kPeerA), now + 1min), ScopeAt(kPeerA), now),
                 "unknown key"));
  EXPECT_TRUE(RefusedFor(verify("", ScopeAt(kPeerA), now), "missing"));
  EXPECT_TRUE(RefusedFor(verify("Bearer abc", ScopeAt(kPeerA), now), "another scheme"));
  EXPECT_TRUE(RefusedFor(verify("Modelplane-HMAC v2:" + key.id() + ":12:zz:" + std::string(kPeerA),
                                ScopeAt(kPeerA), now),
                         "malformed"));
  EXPECT_TRUE(RefusedFor(verify("Modelplane-HMAC v3:" + token.substr(19), ScopeAt(kPeerA), now),
                         "unknown format version"));
}

TEST(PeerTokenTest, AudienceIsThePeerItWasSignedFor) {
  const PeerTokenKey key = Key('a');
  const auto now = system_clock::now();
  const PeerTokenPolicy policy;
  // Every peer holds the same key: a token captured at A must not open B.
  const std::string for_a = SignPeerToken(key, ScopeAt(kPeerA), now + 2min);
  EXPECT_TRUE(VerifyPeerToken(key, for_a, ScopeAt(kPeerA), now, policy));
  EXPECT_TRUE(RefusedFor(VerifyPeerToken(key, for_a, ScopeAt(kPeerB), now, policy),
                         "is for peer 10.0.0.7:7443, not this peer (10.0.0.8:7443)"));
  EXPECT_TRUE(VerifyPeerToken(key, SignPeerToken(key, ScopeAt(kPeerB), now + 2min), ScopeAt(kPeerB),
                              now, policy));
  // Spellings of one peer are different audiences: clients must dial the advertised one.
  EXPECT_FALSE(VerifyPeerToken(key, SignPeerToken(key, ScopeAt("localhost:7443"), now + 2min),
                               ScopeAt("127.0.0.1:7443"), now, policy));
  // IPv6 endpoints hold colons; the audience is the token's last field, so they survive.
  const std::string v6 = FormatPeerEndpoint("fd00::7", 7443);
  EXPECT_EQ(v6, "[fd00::7]:7443");
  EXPECT_TRUE(
      VerifyPeerToken(key, SignPeerToken(key, ScopeAt(v6), now + 1min), ScopeAt(v6), now, policy));

  // Rewriting the audience in the header breaks the MAC, which covers it.
  std::string retargeted = for_a;
  retargeted.replace(retargeted.size() - kPeerA.size(), kPeerA.size(), kPeerB);
  EXPECT_TRUE(RefusedFor(VerifyPeerToken(key, retargeted, ScopeAt(kPeerB), now, policy),
                         "signature does not match"));
  // Dropping it, or making it something a header cannot carry, is malformed.
  const std::string bare = for_a.substr(0, for_a.size() - kPeerA.size());
  EXPECT_TRUE(RefusedFor(VerifyPeerToken(key, bare, ScopeAt(kPeerA), now, policy), "malformed"));
  EXPECT_TRUE(
      RefusedFor(VerifyPeerToken(key, bare + "a b", ScopeAt("a b"), now, policy), "malformed"));
  EXPECT_FALSE(IsValidPeerTokenAudience(""));
  EXPECT_FALSE(IsValidPeerTokenAudience("host:1\n"));
  EXPECT_FALSE(IsValidPeerTokenAudience(std::string(kMaxPeerTokenAudienceBytes + 1, 'h')));
  EXPECT_TRUE(IsValidPeerTokenAudience("node-7.cluster.local:7443"));
}

TEST(PeerTokenTest, TamperingAnyFieldIsRefused) {
  const PeerTokenKey key = Key('a');
  const auto now = system_clock::now();
  const PeerTokenPolicy policy;
  const std::string token = SignPeerToken(key, ScopeAt(kPeerA), now + 2min);
  // Every character after the scheme, changed in turn (the key id to another id, the expiry to
  // another time, a MAC digit, the audience to another peer): each is refused.
  const std::size_t first = std::string("Modelplane-HMAC ").size();
  for (std::size_t i = first; i < token.size(); ++i) {
    if (token[i] == ':') continue;
    std::string tampered = token;
    tampered[i] = token[i] == '1' ? '2' : '1';
    EXPECT_FALSE(VerifyPeerToken(key, tampered, ScopeAt(kPeerA), now, policy))
        << "changed position " << i << ": " << tampered;
  }
}

TEST(PeerTokenTest, ExpiryIsStillEnforced) {
  const PeerTokenKey key = Key('a');
  const auto now = system_clock::now();
  const PeerTokenPolicy policy;
  const std::string token = SignPeerToken(key, ScopeAt(kPeerA), now + 2min);
  // Within the skew after expiry, still accepted: clocks of two nodes differ a little.
  EXPECT_TRUE(VerifyPeerToken(key, token, ScopeAt(kPeerA), now + 2min + 20s, policy));
  EXPECT_TRUE(
      RefusedFor(VerifyPeerToken(key, token, ScopeAt(kPeerA), now + 3min, policy), "expired"));
  // A token that claims to live for an hour, past max_lifetime plus skew.
  EXPECT_TRUE(RefusedFor(VerifyPeerToken(key, SignPeerToken(key, ScopeAt(kPeerA), now + 1h),
                                         ScopeAt(kPeerA), now, policy),
                         "lives longer than allowed"));
  // The audience is checked before expiry, and both must hold: an expired token for the right
  // peer and a fresh one for the wrong peer are both refused.
  EXPECT_FALSE(VerifyPeerToken(key, token, ScopeAt(kPeerB), now + 3min, policy));
}

TEST(PeerTokenTest, RefusesTheUnversionedFirstFormat) {
  // Built as the first format's signer did: HMAC over "<METHOD>\n<path>\n<expiry>", no audience.
  const PeerTokenKey key = Key('a');
  const auto now = system_clock::now();
  const std::int64_t expiry =
      std::chrono::duration_cast<std::chrono::seconds>((now + 1min).time_since_epoch()).count();
  const std::string message = "GET\n" + kPath + "\n" + std::to_string(expiry);
  core::Sha256Bytes mac{};  // HMAC-SHA256 is as long as a SHA-256 digest
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.secret().data(), static_cast<int>(key.secret().size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac.data(), &length);
  const std::string v1 =
      "Modelplane-HMAC " + key.id() + ":" + std::to_string(expiry) + ":" + core::ToHex(mac);
  EXPECT_TRUE(RefusedFor(VerifyPeerToken(key, v1, ScopeAt(kPeerA), now, PeerTokenPolicy{}),
                         "retired v1 format"));
}

TEST(PeerTokenTest, KeysAreLongEnoughAndLoadedWithoutTrailingNewline) {
  EXPECT_FALSE(PeerTokenKey::FromBytes("short"));
  auto directory = core::testing::TemporaryDirectory::Create("peer-key-");
  ASSERT_TRUE(directory);
  const std::string path = directory->path() + "/key";
  std::ofstream(path) << std::string(40, 'a') << "\n";
  auto loaded = PeerTokenKey::Load(path);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_EQ(loaded->secret(), std::string(40, 'a'));
  EXPECT_EQ(loaded->id(), Key('a').id());
  EXPECT_NE(loaded->id(), Key('b').id());
  EXPECT_EQ(loaded->id().size(), 16u);
  EXPECT_FALSE(PeerTokenKey::Load(directory->path() + "/missing"));
  const std::string big = directory->path() + "/big";
  std::ofstream(big) << std::string(4097, 'a');
  auto too_big = PeerTokenKey::Load(big);
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().code(), core::ErrorCode::kInvalidArgument);
  EXPECT_FALSE(PeerTokenKey::Load(directory->path())) << "a directory is not a key";
}

}  // namespace
}  // namespace modelplane::agent
