// A Merkle tree over the file digests of one revision, so that a short statement about the whole
// set (its root, signed once) plus a short proof shows that one blob belongs to it: a peer
// checks that the blob a node asks for is a file of a revision the operator told that node to
// stage (peer tickets, core/pki/peer_ticket.h) without knowing the revision's file list, and
// the proof stays a few hundred bytes for any revision size.
//
// The tree is RFC 9162's (Certificate Transparency 2.0, section 2.1): leaves are the distinct
// digests in ascending byte order, a leaf hashes as SHA-256(0x00 || digest) and an interior
// node as SHA-256(0x01 || left || right), so no leaf can pass for an interior node; a tree of n
// leaves splits at the largest power of two below n. Proofs are its inclusion proofs and are
// checked with its verification algorithm.
//
// Thread safety: a FileSetTree is immutable once made; every function is thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/digest/sha256.h"
#include "core/error/error.h"

namespace modelplane::core {

// Where one leaf sits (index of count) and the sibling hashes from the leaf up to the root.
struct FileSetProof {
  std::uint64_t index = 0;
  std::uint64_t count = 0;
  std::vector<Sha256Bytes> path;

  friend bool operator==(const FileSetProof&, const FileSetProof&) = default;
};

// A proof is at most this many hashes: trees of up to 2^32 files.
inline constexpr std::size_t kMaxFileSetProofHashes = 32;

class FileSetTree {
 public:
  // Duplicates count once; the order given does not matter. An empty set has the root
  // SHA-256("") as RFC 9162 defines, and proves nothing.
  [[nodiscard]] static FileSetTree Of(std::span<const Sha256Bytes> digests);

  [[nodiscard]] const Sha256Bytes& root() const { return root_; }
  [[nodiscard]] std::size_t size() const { return leaves_.size(); }
  // nullopt when `digest` is not in the set.
  [[nodiscard]] std::optional<FileSetProof> ProofOf(const Sha256Bytes& digest) const;

 private:
  FileSetTree(std::vector<Sha256Bytes> leaves, std::vector<std::vector<Sha256Bytes>> levels);
  std::vector<Sha256Bytes> leaves_;  // sorted, distinct
  // levels_[0] holds the leaf hashes; each next level pairs the one below, a last node without
  // a partner moving up unchanged (which builds RFC 9162's tree); the last level is the root.
  std::vector<std::vector<Sha256Bytes>> levels_;
  Sha256Bytes root_{};
};

// True when `proof` shows that `digest` is a leaf of the tree whose root is `root`.
[[nodiscard]] bool VerifyFileSetProof(const Sha256Bytes& root, const Sha256Bytes& digest,
                                      const FileSetProof& proof);

// "<index>.<count>.<base64 of the path's hashes, concatenated>", the form a header carries.
[[nodiscard]] std::string FormatFileSetProof(const FileSetProof& proof);
// kInvalidArgument for anything else: numbers out of range, an index not below the count, a
// path longer than kMaxFileSetProofHashes or not a whole number of hashes.
[[nodiscard]] Result<FileSetProof> ParseFileSetProof(std::string_view text);

}  // namespace modelplane::core
