// The cluster's model-cache inventory as the extender needs it: each ModelRevision's cache key
// (digest) and size, and each node's ModelCache (capacity and the state of every digest it
// holds). Fed by the informers (inventory_sync.h), read by every scheduling request.
//
// Entries are immutable snapshots behind shared_ptr: an update replaces the pointer, so a
// request keeps a consistent view of a node however long it takes.
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"

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

// std::hash<std::string> under another name, so that the map below is searched by hash at every
// size: libstdc++ scans maps of up to 20 std::hash<std::string>-keyed entries linearly,
// comparing every 71-byte digest (measured: a tenth of a 5,000-candidate decision). Not
// noexcept, so the map still keeps each entry's hash and never rehashes a key to walk a bucket.
struct DigestHasher {
  std::size_t operator()(const std::string& digest) const {
    return std::hash<std::string>{}(digest);
  }
};
using CachedRevisionMap = std::unordered_map<std::string, CachedRevisionInfo, DigestHasher>;

// One node's ModelCache status.
// What every request reads comes first (the name, the digest index, the sizes), so that it
// shares the snapshot's first cache lines; the map and the eviction order come last.
struct NodeCacheInfo {
  std::string node;
  // The digests in `revisions` by hash, sorted, once IndexDigests ran (UpsertCache runs it on
  // the snapshot it keeps): a request asks every candidate node about a few digests, and most
  // answers are "not here", which this small array gives without touching the map's buckets
  // and nodes. Stale if `revisions` changes afterwards.
  std::vector<DigestHash> digest_hashes;
  bool digests_indexed = false;
  bool has_status = false;          // false until the node agent first reports
  std::int64_t capacity_bytes = 0;  // 0: not reported
  std::int64_t used_bytes = 0;
  std::int64_t reserved_bytes = 0;
  std::int64_t high_watermark_bytes = 0;  // 0: not reported (eviction off or an older agent)
  std::int64_t reclaimable_bytes = 0;     // what eviction could free without touching protected
  CachedRevisionMap revisions;            // by digest
  // Coldest first: never used, then least recently used (the agent's value order, roughly).
  std::vector<EvictableRevision> evictable;

  [[nodiscard]] const CachedRevisionInfo* Find(const std::string& digest) const;
  // The same with the digest's std::hash given: a request asks thousands of nodes about one
  // digest, and hashing its 71 bytes once per node was a measurable part of a decision.
  [[nodiscard]] const CachedRevisionInfo* Find(const std::string& digest,
                                               std::size_t digest_hash) const;
  void IndexDigests();  // fills digest_hashes from revisions
  // capacity - used - reserved, never below 0; meaningful only when capacity_bytes > 0.
  [[nodiscard]] std::int64_t FreeBytes() const;
};

// Asks the memory system for what a pass over `caches` will read at `index` + a few: the
// snapshots lie scattered over the heap, and at thousands of candidates a pass that waits for
// each one in turn spends most of its time waiting. Call once per index, in order.
void PrefetchAhead(std::span<const std::shared_ptr<const NodeCacheInfo>> caches, std::size_t index);

[[nodiscard]] RevisionInfo MakeRevisionInfo(const core::api::ModelRevision& revision);
[[nodiscard]] NodeCacheInfo MakeNodeCacheInfo(const core::api::ModelCache& cache);

class NodeCacheTable;

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
  // The same for every cache (0 where null), in order. The digests that share a file with
  // `revision` are found once, from an index by file, so a node costs one merge of those few
  // digests with its digest index instead of a merge of file lists per revision it holds.
  [[nodiscard]] std::vector<std::int64_t> HeldBytes(
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
