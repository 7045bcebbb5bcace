// The cluster's model-cache inventory as the extender needs it: each ModelRevision's cache key
// (digest) and size, and each node's ModelCache (capacity and the state of every digest it
// holds). Fed by the informers (inventory_sync.h), read by every scheduling request.
//
// Entries are immutable snapshots behind shared_ptr: an update replaces the pointer, so a
// request keeps a consistent view of a node however long it takes.
// Thread safety: every method may be called from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "scheduler-extender/digest_text.h"

namespace modelplane::extender {

// One file's content, as the stores key it.
struct BlobInfo {
  std::string sha256;  // "sha256:<hex>" as spec.files writes it
  std::int64_t size = 0;
};

// What placement needs to know about one ModelRevision.
struct RevisionInfo {
  std::string key;         // "namespace/name"
  std::string digest;      // status.digest, else computed from a valid spec, else empty
  std::int64_t bytes = 0;  // status.totalBytes, else the sum of spec.files sizes
  bool revoked = false;
  std::vector<BlobInfo> blobs;  // its distinct files, sorted by sha256
};

// One digest on one node, as its agent reports it.
struct CachedRevisionInfo {
  std::string state;  // api::kCacheState*
  std::int64_t bytes_done = 0;
  std::int64_t bytes_total = 0;
};

// A Ready revision on a node that nothing protects (not in use, pinned, reserved or the zone's
// last copy): what its agent may evict to make room, and what evicting it frees.
struct EvictableRevision {
  std::int64_t unique_bytes = 0;
  std::optional<core::api::Timestamp> last_used;  // a pod last used it there; nullopt: never
};

// A digest a node lists, for the node's index (below): its hash (std::hash<std::string>) with the
// lowest bit given over to whether its state is Ready, so that an entry is 8 bytes and a node's
// whole index usually one or two cache lines. Compare by key(): the hash without that bit.
class DigestHash {
 public:
  DigestHash(std::size_t hash, bool ready) : bits_(KeyOf(hash) | (ready ? 1U : 0U)) {}
  [[nodiscard]] static std::size_t KeyOf(std::size_t hash) { return hash & ~std::size_t{1}; }
  [[nodiscard]] std::size_t key() const { return KeyOf(bits_); }
  [[nodiscard]] bool ready() const { return (bits_ & 1U) != 0; }

 private:
  std::size_t bits_;
};

// A node's digests as a set of 256 bits, one per value of their keys' top byte: a key whose
// bit is clear is not on the node. A request asks thousands of nodes about a few digests and
// most answers are "not here"; this answers most of them from the snapshot's first cache
// lines, without searching (or reading) the node's index.
class DigestSignature {
 public:
  void Add(std::size_t key) { words_[Bit(key) / 64] |= std::uint64_t{1} << (Bit(key) % 64); }
  [[nodiscard]] bool MayHold(std::size_t key) const {
    return (words_[Bit(key) / 64] >> (Bit(key) % 64) & 1U) != 0;
  }
  // Whether any key added to `other` may be among these.
  [[nodiscard]] bool MayHoldAnyOf(const DigestSignature& other) const {
    return ((words_[0] & other.words_[0]) | (words_[1] & other.words_[1]) |
            (words_[2] & other.words_[2]) | (words_[3] & other.words_[3])) != 0;
  }

 private:
  static std::size_t Bit(std::size_t key) { return key >> 56; }
  std::array<std::uint64_t, 4> words_{};
};

// One digest a node lists, and what its agent says of it.
struct CachedDigest {
  DigestText digest;
  CachedRevisionInfo info;
};

// One node's ModelCache status.
// What every request reads comes first (the name, the digest index, the sizes), so that it
// shares the snapshot's first cache lines; the entries and the eviction order come last.
struct NodeCacheInfo {
  std::string node;
  // The hashes of `entries`' digests, sorted, with `entries` in the same order, once
  // IndexDigests ran (UpsertCache runs it on the snapshot it keeps): a request asks every
  // candidate node about a few digests, and most answers are "not here", which this small
  // array gives without touching the entries. Stale if `entries` changes afterwards.
  std::vector<DigestHash> digest_hashes;
  DigestSignature digest_signature;  // of digest_hashes' keys, once indexed
  bool digests_indexed = false;
  bool has_status = false;          // false until the node agent first reports
  std::int64_t capacity_bytes = 0;  // 0: not reported
  std::int64_t used_bytes = 0;
  std::int64_t reserved_bytes = 0;
  std::int64_t high_watermark_bytes = 0;  // 0: not reported (eviction off or an older agent)
  std::int64_t reclaimable_bytes = 0;     // what eviction could free without touching protected
  // One per digest once indexed; before that the last entry of a digest is the one that counts.
  // A flat array, not a map: a digest found costs one entry's cache lines, not a bucket, a list
  // node and the key's own allocation.
  std::vector<CachedDigest> entries;
  // Coldest first: never used, then least recently used (the agent's value order, roughly).
  std::vector<EvictableRevision> evictable;

  // Adds the digest's entry, or replaces it (the last one set counts); unindexes.
  void Set(std::string_view digest, CachedRevisionInfo info);
  [[nodiscard]] const CachedRevisionInfo* Find(const std::string& digest) const;
  // The same with the digest's std::hash given: a request asks thousands of nodes about one
  // digest, and hashing its 71 bytes once per node was a measurable part of a decision.
  [[nodiscard]] const CachedRevisionInfo* Find(const std::string& digest,
                                               std::size_t digest_hash) const;
  // For an indexed cache: the entry for `digest`, whose hash's key (DigestHash::KeyOf) is
  // `key`; hashes can collide, so the digests with that key are compared. Null when none.
  [[nodiscard]] const CachedRevisionInfo* FindByKey(std::size_t key,
                                                    const std::string& digest) const;
  // For an indexed cache: the first index entry with `key`, or null.
  [[nodiscard]] const DigestHash* FindKey(std::size_t key) const;
  // FindByKey's second half: from `first` (FindKey's answer for the digest's key), the entry
  // whose digest is `digest`, or null.
  [[nodiscard]] const CachedRevisionInfo* FindFrom(const DigestHash* first,
                                                   const std::string& digest) const;
  // Asks the memory system for the lines of the entry behind index entry `at` (of this
  // cache's digest_hashes), which FindFrom and the rules read next.
  void PrefetchEntry(const DigestHash* at) const;
  // Sorts `entries` by their digests' hashes, keeps the last entry of each digest and fills
  // digest_hashes to match.
  void IndexDigests();
  // capacity - used - reserved, never below 0; meaningful only when capacity_bytes > 0.
  [[nodiscard]] std::int64_t FreeBytes() const;
};

// What one candidate node holds of the revision a request asks about (RevisionHoldings).
struct NodeHolding {
  // Bytes of the revision's files the node holds through other digests Ready there.
  std::int64_t held_bytes = 0;
  // The node's entry for the revision's own digest; null: none.
  const CachedRevisionInfo* entry = nullptr;
};

// Asks the memory system for what a pass over `caches` will read at `index` + a few: the
// snapshots lie scattered over the heap, and at thousands of candidates a pass that waits for
// each one in turn spends most of its time waiting. Call once per index, in order.
void PrefetchAhead(std::span<const std::shared_ptr<const NodeCacheInfo>> caches, std::size_t index);

[[nodiscard]] RevisionInfo MakeRevisionInfo(const core::api::ModelRevision& revision);
[[nodiscard]] NodeCacheInfo MakeNodeCacheInfo(const core::api::ModelCache& cache);

class NodeCacheTable;
class RevisionHoldings;

class CacheInventory {
 public:
  CacheInventory();
  ~CacheInventory();
  CacheInventory(const CacheInventory&) = delete;
  CacheInventory& operator=(const CacheInventory&) = delete;

  void UpsertRevision(RevisionInfo revision);
  void RemoveRevision(const std::string& key);
  void UpsertCache(NodeCacheInfo cache);
  void RemoveCache(const std::string& node);

  [[nodiscard]] std::shared_ptr<const RevisionInfo> FindRevision(const std::string& key) const;
  // Bytes of `revision`'s files the node holds already through revisions Ready there (the
  // stores are content-addressed: a file two revisions share is stored, and fetched, once).
  // The revision's own entry does not count: Ready is scored whole, Staging by its progress.
  [[nodiscard]] std::int64_t HeldBytes(const RevisionInfo& revision,
                                       const NodeCacheInfo& cache) const;
  // What a request needs to count, node by node, what each candidate holds of `revision`
  // (revision_holdings.h); `revision` must outlive it.
  [[nodiscard]] RevisionHoldings HoldingsOf(const RevisionInfo& revision) const;
  // For every cache (empty where null), in order: those held bytes and the node's entry for the
  // revision's digest. The entries point into `caches`, which must outlive them.
  [[nodiscard]] std::vector<NodeHolding> Holdings(
      const RevisionInfo& revision,
      std::span<const std::shared_ptr<const NodeCacheInfo>> caches) const;
  // One entry per node, in order; null where the node has no ModelCache.
  [[nodiscard]] std::vector<std::shared_ptr<const NodeCacheInfo>> FindCaches(
      std::span<const std::string> nodes) const;

  [[nodiscard]] std::size_t RevisionCount() const;
  [[nodiscard]] std::size_t CacheCount() const;

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const RevisionInfo>> revisions_;
  // Per file (sha256), the revisions with a digest that list it (what a node holding one of
  // those digests Ready holds); the entries are owned by revisions_.
  std::unordered_map<std::string, std::vector<const RevisionInfo*>> by_blob_;
  std::unique_ptr<NodeCacheTable> caches_;
};

}  // namespace modelplane::extender
