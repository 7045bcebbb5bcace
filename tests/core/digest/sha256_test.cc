#include "core/digest/sha256.h"

#include <cstdio>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

// FIPS 180-2 test vectors.
constexpr std::string_view kEmptyHex =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr std::string_view kAbcHex =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr std::string_view kMillionAHex =
    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Sha256HexOf(""), kEmptyHex);
  EXPECT_EQ(Sha256HexOf("abc"), kAbcHex);
  EXPECT_EQ(Sha256HexOf(std::string(1'000'000, 'a')), kMillionAHex);
}

TEST(Sha256Test, StreamingEqualsOneShotWhateverTheChunking) {
  const std::string input(1'000'000, 'a');
  auto hasher = Sha256::Create();
  ASSERT_TRUE(hasher.has_value());
  for (std::size_t offset = 0, chunk = 1; offset < input.size(); chunk = chunk * 3 + 1) {
    const std::size_t take = std::min(chunk, input.size() - offset);
    hasher->Update(std::string_view(input).substr(offset, take));
    offset += take;
  }
  EXPECT_EQ(ToHex(hasher->Finish()), kMillionAHex);
  // Finish resets, so the object can hash the next input.
  hasher->Update("abc");
  EXPECT_EQ(ToHex(hasher->Finish()), kAbcHex);
}

TEST(Sha256Test, FormatAndParseRoundTrip) {
  const Sha256Bytes digest = Sha256Of("abc");
  const std::string text = FormatDigest(digest);
  EXPECT_EQ(text, "sha256:" + std::string(kAbcHex));
  auto parsed = ParseDigest(text);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed, digest);
  std::string upper = text;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  upper.replace(0, 7, "sha256:");
  EXPECT_EQ(ParseDigest(upper).value(), digest);
}

TEST(Sha256Test, ParseRejectsMalformedDigests) {
  EXPECT_FALSE(ParseDigest(std::string(kAbcHex)).has_value()) << "bare hex needs allow_bare";
  EXPECT_TRUE(ParseDigest(std::string(kAbcHex), /*allow_bare=*/true).has_value());
  EXPECT_FALSE(ParseDigest("sha256:abc").has_value());
  EXPECT_FALSE(ParseDigest("md5:" + std::string(kAbcHex)).has_value());
  std::string bad = "sha256:" + std::string(kAbcHex);
  bad.back() = 'g';
  auto result = ParseDigest(bad);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidArgument);
}

TEST(Sha256Test, HashesFiles) {
  char path[] = "/tmp/modelplane-sha256-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  {
    std::ofstream out(path, std::ios::binary);
    out << std::string(1'000'000, 'a');
  }
  auto digest = Sha256OfFile(path);
  ::unlink(path);
  ASSERT_TRUE(digest.has_value());
  EXPECT_EQ(ToHex(*digest), kMillionAHex);
  auto missing = Sha256OfFile("/nonexistent/modelplane/file");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kIo);
}

}  // namespace
}  // namespace modelplane::core
