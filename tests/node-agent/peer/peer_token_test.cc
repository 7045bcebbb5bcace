#include "node-agent/peer/peer_token.h"

#include <fstream>

#include <gtest/gtest.h>

#include "tests/core/http/test_certificates.h"

namespace modelplane::agent {
namespace {

using namespace std::chrono_literals;
using std::chrono::system_clock;

const std::string kPath = "/v1/blobs/sha256:" + std::string(64, 'a');

PeerTokenKey Key(char fill) {
  auto key = PeerTokenKey::FromBytes(std::string(40, fill));
  EXPECT_TRUE(key);
  return *key;
}

TEST(PeerTokenTest, VerifiesWhatItSignedAndNothingElse) {
  const PeerTokenKey key = Key('a');
  const auto now = system_clock::now();
  const PeerTokenPolicy policy;
  const std::string token = SignPeerToken(key, "GET", kPath, now + 2min);
  EXPECT_TRUE(token.starts_with("Modelplane-HMAC " + key.id() + ":"));
  EXPECT_TRUE(VerifyPeerToken(key, token, "GET", kPath, now, policy));

  const auto refused = [&](std::string_view value, std::string_view method, std::string_view path,
                           system_clock::time_point at) {
    auto result = VerifyPeerToken(key, value, method, path, at, policy);
    return !result && result.error().code() == core::ErrorCode::kUnauthenticated;
  };
  EXPECT_TRUE(refused(token, "HEAD", kPath, now));
  EXPECT_TRUE(refused(token, "GET", kPath + "b", now));
  EXPECT_TRUE(refused(token, "GET", kPath, now + 3min));  // expired beyond the 30 s skew
  EXPECT_TRUE(refused(SignPeerToken(Key('b'), "GET", kPath, now + 1min), "GET", kPath, now));
  EXPECT_TRUE(refused(SignPeerToken(key, "GET", kPath, now + 1h), "GET", kPath, now));
  EXPECT_TRUE(refused("", "GET", kPath, now));
  EXPECT_TRUE(refused("Bearer abc", "GET", kPath, now));
  EXPECT_TRUE(refused("Modelplane-HMAC " + key.id() + ":12:zz", "GET", kPath, now));
  // One flipped hex digit of the MAC.
  std::string tampered = token;
  tampered.back() = tampered.back() == '0' ? '1' : '0';
  EXPECT_TRUE(refused(tampered, "GET", kPath, now));
  // Within the skew after expiry, still accepted: clocks of two nodes differ a little.
  EXPECT_TRUE(VerifyPeerToken(key, token, "GET", kPath, now + 2min + 20s, policy));
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
}

}  // namespace
}  // namespace modelplane::agent
