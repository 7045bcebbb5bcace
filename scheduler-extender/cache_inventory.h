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

// A digest a node lists, by its hash (std::hash<std::string>): the node's index (below).
struct DigestHash {
  std::size_t hash = 0;
  bool ready = false;  // its state is Ready
};

// One node's ModelCache status.
struct NodeCacheInfo {
  std::string node;
  bool has_status = false;          // false until the node agent first reports
  std::int64_t capacity_bytes = 0;  // 0: not reported
  std::int64_t used_bytes = 0;
  std::int64_t reserved_bytes = 0;
  std::int64_t high_watermark_bytes = 0;  // 0: not reported (eviction off or an older agent)
  std::int64_t reclaimable_bytes = 0;     // what eviction could free without touching protected
  std::unordered_map<std::string, CachedRevisionInfo> revisions;  // by digest
  // Coldest first: never used, then least recently used (the agent's value order, roughly).
  std::vector<EvictableRevision> evictable;
  // The digests in `revisions` by hash, sorted, once IndexDigests ran (UpsertCache runs it on
  // the snapshot it keeps): a request asks every candidate node about a few digests, and most
  // answers are "not here", which this small array gives without touching the map's buckets
  // and nodes. Stale if `revisions` changes afterwards.
  std::vector<DigestHash> digest_hashes;
  bool digests_indexed = false;

  [[nodiscard]] const CachedRevisionInfo* Find(const std::string& digest) const;
  void IndexDigests();  // fills digest_hashes from revisions
  // capacity - used - reserved, never below 0; meaningful only when capacity_bytes > 0.
  [[nodiscard]] std::int64_t FreeBytes() const;
};

[[nodiscard]] RevisionInfo MakeRevisionInfo(const core::api::ModelRevision& revision);
[[nodiscard]] NodeCacheInfo MakeNodeCacheInfo(const core::api::ModelCache& cache);

class CacheInventory {
 public:
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
  std::unordered_map<std::string, std::shared_ptr<const NodeCacheInfo>> caches_;
};

}  // namespace modelplane::extender
