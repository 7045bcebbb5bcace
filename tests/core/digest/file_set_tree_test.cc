#include "core/digest/file_set_tree.h"

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/text/base64.h"

namespace modelplane::core {
namespace {

Sha256Bytes DigestNumber(int number) {
  return Sha256Of("file-" + std::to_string(number));
}

std::vector<Sha256Bytes> Digests(int count) {
  std::vector<Sha256Bytes> digests;
  digests.reserve(static_cast<std::size_t>(count));
  for (int number = 0; number < count; ++number) digests.push_back(DigestNumber(number));
  return digests;
}

std::string Bytes(const Sha256Bytes& hash) {
  return {reinterpret_cast<const char*>(hash.data()), hash.size()};
}

// RFC 9162's Merkle Tree Hash written as the RFC states it (recursive split at the largest
// power of two below n), to check the tree's level-by-level construction against it.
Sha256Bytes ReferenceRoot(const std::vector<Sha256Bytes>& sorted, std::size_t begin,
                          std::size_t end) {
  const std::size_t count = end - begin;
  if (count == 1) return Sha256Of(std::string(1, '\0') + Bytes(sorted[begin]));
  const std::size_t split = std::bit_floor(count - 1);
  return Sha256Of(std::string(1, '\1') + Bytes(ReferenceRoot(sorted, begin, begin + split)) +
                  Bytes(ReferenceRoot(sorted, begin + split, end)));
}

TEST(FileSetTreeTest, RootIsRfc9162MerkleTreeHashOfTheSortedDistinctDigests) {
  for (int count = 1; count <= 70; ++count) {
    std::vector<Sha256Bytes> digests = Digests(count);
    std::vector<Sha256Bytes> sorted = digests;
    std::ranges::sort(sorted);
    EXPECT_EQ(FileSetTree::Of(digests).root(), ReferenceRoot(sorted, 0, sorted.size()))
        << count << " files";
  }
}

TEST(FileSetTreeTest, OrderAndDuplicatesDoNotChangeTheRoot) {
  std::vector<Sha256Bytes> digests = Digests(9);
  const Sha256Bytes root = FileSetTree::Of(digests).root();
  std::ranges::reverse(digests);
  digests.push_back(digests.front());
  const FileSetTree tree = FileSetTree::Of(digests);
  EXPECT_EQ(tree.root(), root);
  EXPECT_EQ(tree.size(), 9U);
}

TEST(FileSetTreeTest, EveryMemberHasAProofThatVerifiesAndNoOtherLeafDoes) {
  for (int count = 1; count <= 40; ++count) {
    const std::vector<Sha256Bytes> digests = Digests(count);
    const FileSetTree tree = FileSetTree::Of(digests);
    for (const Sha256Bytes& digest : digests) {
      const auto proof = tree.ProofOf(digest);
      ASSERT_TRUE(proof.has_value());
      EXPECT_TRUE(VerifyFileSetProof(tree.root(), digest, *proof)) << count;
      EXPECT_FALSE(VerifyFileSetProof(tree.root(), DigestNumber(count + 1), *proof)) << count;
      for (const Sha256Bytes& other : digests) {
        if (other != digest) {
          EXPECT_FALSE(VerifyFileSetProof(tree.root(), other, *proof));
        }
      }
    }
  }
}

TEST(FileSetTreeTest, ANonMemberHasNoProof) {
  const FileSetTree tree = FileSetTree::Of(Digests(5));
  EXPECT_FALSE(tree.ProofOf(DigestNumber(5)).has_value());
  EXPECT_FALSE(FileSetTree::Of({}).ProofOf(DigestNumber(0)).has_value());
}

TEST(FileSetTreeTest, ATamperedProofFails) {
  const std::vector<Sha256Bytes> digests = Digests(13);
  const FileSetTree tree = FileSetTree::Of(digests);
  const Sha256Bytes digest = digests[6];
  const FileSetProof good = *tree.ProofOf(digest);
  ASSERT_TRUE(VerifyFileSetProof(tree.root(), digest, good));

  FileSetProof flipped = good;
  flipped.path[1][0] ^= 1U;
  EXPECT_FALSE(VerifyFileSetProof(tree.root(), digest, flipped));
  FileSetProof moved = good;
  moved.index = (good.index + 1) % good.count;
  EXPECT_FALSE(VerifyFileSetProof(tree.root(), digest, moved));
  // A count that changes the path's shape fails. (One that keeps it, 14 for a leaf of the
  // first eight, still leads to the same root: the root, not the count, is what is signed, and
  // only a member's leaf hash can reach it.)
  FileSetProof shrunk = good;
  shrunk.count = 8;
  EXPECT_FALSE(VerifyFileSetProof(tree.root(), digest, shrunk));
  FileSetProof shortened = good;
  shortened.path.pop_back();
  EXPECT_FALSE(VerifyFileSetProof(tree.root(), digest, shortened));
  FileSetProof lengthened = good;
  lengthened.path.push_back(tree.root());
  EXPECT_FALSE(VerifyFileSetProof(tree.root(), digest, lengthened));
  FileSetProof outside = good;
  outside.index = good.count;
  EXPECT_FALSE(VerifyFileSetProof(tree.root(), digest, outside));
  EXPECT_FALSE(VerifyFileSetProof(FileSetTree::Of(Digests(12)).root(), digest, good));
}

TEST(FileSetTreeTest, AnInteriorNodeCannotPassForALeaf) {
  // The leaf and interior prefixes differ: the hash of two leaves is not a digest the tree
  // accepts one level up (second-preimage resistance of the tree).
  const std::vector<Sha256Bytes> digests = Digests(4);
  const FileSetTree tree = FileSetTree::Of(digests);
  std::vector<Sha256Bytes> sorted = digests;
  std::ranges::sort(sorted);
  const FileSetProof proof = *tree.ProofOf(sorted[0]);
  const FileSetProof upper{.index = 0, .count = 2, .path = {proof.path.back()}};
  const Sha256Bytes pair = ReferenceRoot(sorted, 0, 2);
  EXPECT_FALSE(VerifyFileSetProof(tree.root(), pair, upper));
}

TEST(FileSetTreeTest, AProofRoundTripsThroughItsTextForm) {
  const std::vector<Sha256Bytes> digests = Digests(1000);
  const FileSetTree tree = FileSetTree::Of(digests);
  for (const Sha256Bytes& digest : {digests[0], digests[517], digests[999]}) {
    const FileSetProof proof = *tree.ProofOf(digest);
    EXPECT_EQ(proof.path.size(), 10U);
    const std::string text = FormatFileSetProof(proof);
    EXPECT_LT(text.size(), 450U);  // ten hashes: small enough for a header on every request
    auto parsed = ParseFileSetProof(text);
    ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
    EXPECT_EQ(*parsed, proof);
  }
  const FileSetProof single = *FileSetTree::Of(Digests(1)).ProofOf(DigestNumber(0));
  EXPECT_EQ(FormatFileSetProof(single), "0.1.");
  EXPECT_EQ(ParseFileSetProof("0.1.").value(), single);
}

TEST(FileSetTreeTest, MalformedProofTextIsRefused) {
  const std::string hash = EncodeBase64(std::string(32, 'x'));
  for (const std::string& text :
       {std::string(), std::string("0.1"), std::string("a.1."), std::string("1.1."),
        std::string("01.2.") + hash, std::string("-1.2."), std::string("0.18446744073709551616."),
        std::string("0.2.") + EncodeBase64(std::string(31, 'x')), std::string("0.2.!!!!"),
        std::string("0.2.") + EncodeBase64(std::string(33 * 32, 'x')),
        std::string("0.2.") + std::string(5000, 'A')}) {
    EXPECT_FALSE(ParseFileSetProof(text).has_value()) << text.substr(0, 60);
  }
}

}  // namespace
}  // namespace modelplane::core
