// What one request counts, node by node, of the revision it asks about: the bytes of the
// revision's files each candidate holds already through other digests Ready there (stores are
// content-addressed: a file two revisions share is stored, and fetched, once), and the
// candidate's entry for the revision's own digest. CacheInventory::HoldingsOf makes one per
// request, with the digests that share the revision's files found once from its index by
// file; each node then costs a look-up of those few digests (and the revision's own) in its
// digest signature, and a merge with its index only where the signature says they may be
// there.
// Thread safety: none; one per request, used on one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler-extender/cache_inventory.h"

namespace modelplane::extender {

// Another digest that lists some of the revision's files: which ones (indexes into the
// revision's sorted blobs, ascending) and their bytes.
struct SharingDigest {
  std::string digest;
  std::size_t key = 0;  // DigestHash::KeyOf its hash
  std::vector<std::uint32_t> blobs;
  std::int64_t bytes = 0;
};

class RevisionHoldings {
 public:
  // `revision` must outlive this object; `sharing` must not list the revision's own digest.
  RevisionHoldings(const RevisionInfo& revision, std::vector<SharingDigest> sharing);

  // What `cache` holds of the revision; the entry points into `cache`. A hash match stands for
  // a sharing digest (a wrong one needs two digests with the same 64-bit hash on one node, and
  // would only shift a score); the revision's own digest is compared whole.
  [[nodiscard]] NodeHolding Of(const NodeCacheInfo& cache);
  // The same for every cache (empty where null), in order: a chunk of tens of caches, whose
  // entries for the revision's own digest are asked for from memory before any is read.
  [[nodiscard]] std::vector<NodeHolding> Of(
      std::span<const std::shared_ptr<const NodeCacheInfo>> caches);

 private:
  // The bytes of the revision's files an indexed cache holds through the sharing digests.
  std::int64_t HeldThroughOthers(const NodeCacheInfo& cache);
  // The first index entry of an indexed cache with the revision's own digest's key, or null.
  [[nodiscard]] const DigestHash* OwnKeyOn(const NodeCacheInfo& cache) const;
  // The bytes of the files the hits hold, each file counted once.
  std::int64_t HeldBytes();
  std::int64_t CountFilesOnce();

  const RevisionInfo& revision_;
  const std::size_t own_key_;           // DigestHash::KeyOf the revision's digest's hash
  std::vector<SharingDigest> sharing_;  // sorted by key, for the merge with a node's index
  // Of the sharing digests' keys and the revision's own: a node whose signature has none of
  // them holds nothing of the revision, which most candidates show at once.
  DigestSignature wanted_;
  std::vector<std::uint32_t> hits_;          // into sharing_: the digests Ready on the node at hand
  std::vector<const DigestHash*> own_keys_;  // Of(caches): each cache's OwnKeyOn
  // HeldBytes by the set of hits (bit i: sharing_[i]) when there are at most 64 sharing
  // digests: nodes holding the same few digests are common, and each set is counted once.
  std::unordered_map<std::uint64_t, std::int64_t> held_by_hits_;
  std::vector<std::uint64_t> marks_;  // per blob: the stamp of the last count that took it
  std::uint64_t stamp_ = 0;
};

}  // namespace modelplane::extender
