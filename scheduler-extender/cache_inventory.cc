#include "scheduler-extender/cache_inventory.h"

#include <algorithm>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "core/api/model_revocation.h"
#include "core/api/object_key.h"
#include "core/api/revision_digest.h"
#include "scheduler-extender/node_cache_table.h"
#include "scheduler-extender/revision_holdings.h"

namespace modelplane::extender {

void NodeCacheInfo::Set(std::string_view digest, CachedRevisionInfo info) {
  entries.push_back({.digest = DigestText(digest), .info = std::move(info)});
  digests_indexed = false;
}

const CachedRevisionInfo* NodeCacheInfo::Find(const std::string& digest) const {
  return Find(digest, std::hash<std::string>{}(digest));
}

const CachedRevisionInfo* NodeCacheInfo::Find(const std::string& digest,
                                              std::size_t digest_hash) const {
  if (digest.empty()) return nullptr;
  if (digests_indexed) return FindByKey(DigestHash::KeyOf(digest_hash), digest);
  const auto last =
      std::ranges::find_if(entries.rbegin(), entries.rend(),
                           [&](const CachedDigest& entry) { return entry.digest == digest; });
  return last == entries.rend() ? nullptr : &last->info;
}

const DigestHash* NodeCacheInfo::FindKey(std::size_t key) const {
  if (digest_hashes.empty() || !digest_signature.MayHold(key)) return nullptr;
  // The first entry not below `key`, without branches on the comparisons: the index is short
  // and searched on thousands of nodes per request, where mispredicted branches cost more
  // than the comparisons.
  const DigestHash* first = digest_hashes.data();
  for (std::size_t length = digest_hashes.size(); length > 1;) {
    const std::size_t half = length / 2;
    first = first[half].key() < key ? first + half : first;
    length -= half;
  }
  if (first->key() < key) ++first;
  return first != digest_hashes.data() + digest_hashes.size() && first->key() == key ? first
                                                                                     : nullptr;
}

const CachedRevisionInfo* NodeCacheInfo::FindByKey(std::size_t key,
                                                   const std::string& digest) const {
  return FindFrom(FindKey(key), digest);
}

const CachedRevisionInfo* NodeCacheInfo::FindFrom(const DigestHash* first,
                                                  const std::string& digest) const {
  if (first == nullptr) return nullptr;
  const std::size_t key = first->key();
  for (auto at = static_cast<std::size_t>(first - digest_hashes.data());
       at < digest_hashes.size() && digest_hashes[at].key() == key; ++at) {
    if (entries[at].digest == digest) return &entries[at].info;
  }
  return nullptr;
}

void NodeCacheInfo::PrefetchEntry(const DigestHash* at) const {
  // An entry spans up to four cache lines (its text, then the state and the sizes).
  constexpr std::size_t kLine = 64;
  const char* entry =
      reinterpret_cast<const char*>(&entries[static_cast<std::size_t>(at - digest_hashes.data())]);
  for (std::size_t offset = 0; offset < sizeof(CachedDigest); offset += kLine) {
    __builtin_prefetch(entry + offset);
  }
  __builtin_prefetch(entry + sizeof(CachedDigest) - 1);
}

void PrefetchAhead(std::span<const std::shared_ptr<const NodeCacheInfo>> caches,
                   std::size_t index) {
  // Two distances: the snapshot itself far ahead, then, once it has arrived, the digest index
  // it points to. Far enough to cover a miss to memory at a few hundred ns per node.
  constexpr std::size_t kSnapshotDistance = 8;
  constexpr std::size_t kIndexDistance = 4;
  if (index + kSnapshotDistance < caches.size() && caches[index + kSnapshotDistance]) {
    __builtin_prefetch(caches[index + kSnapshotDistance].get());
  }
  if (index + kIndexDistance < caches.size() && caches[index + kIndexDistance]) {
    __builtin_prefetch(caches[index + kIndexDistance]->digest_hashes.data());
  }
}

void NodeCacheInfo::IndexDigests() {
  // The position of each digest's last entry, with its hash's key.
  std::vector<std::pair<std::size_t, std::size_t>> kept;  // (key, position)
  {
    std::unordered_map<std::string_view, std::size_t> last;
    last.reserve(entries.size());
    for (std::size_t at = 0; at < entries.size(); ++at) last[entries[at].digest.view()] = at;
    kept.reserve(last.size());
    for (const auto& [digest, at] : last) {
      kept.emplace_back(DigestHash::KeyOf(std::hash<std::string_view>{}(digest)), at);
    }
  }
  std::ranges::sort(kept);
  std::vector<CachedDigest> sorted;
  sorted.reserve(kept.size());
  digest_hashes.clear();
  digest_hashes.reserve(kept.size());
  digest_signature = {};
  for (const auto& [key, at] : kept) {
    digest_hashes.emplace_back(key, entries[at].info.state == core::api::kCacheStateReady);
    digest_signature.Add(key);
    sorted.push_back(std::move(entries[at]));
  }
  entries = std::move(sorted);
  digests_indexed = true;
}

std::int64_t NodeCacheInfo::FreeBytes() const {
  return std::max<std::int64_t>(0, capacity_bytes - used_bytes - reserved_bytes);
}

RevisionInfo MakeRevisionInfo(const core::api::ModelRevision& revision) {
  RevisionInfo info;
  info.key = core::api::ObjectKey(revision.metadata.namespace_name, revision.metadata.name);
  info.revoked = core::api::IsRevoked(revision);
  if (revision.status && !revision.status->digest.empty()) {
    info.digest = revision.status->digest;
  } else if (auto computed = core::api::ComputeRevisionDigest(revision.spec)) {
    // The operator has not written status yet; the digest is a pure function of the spec, so
    // computing it here gives the same cache key the agents store under.
    info.digest = std::move(*computed);
  }
  if (revision.status && revision.status->total_bytes > 0) {
    info.bytes = revision.status->total_bytes;
  } else {
    // Sizes are bounded by kMaxFileSize and kMaxFiles, so the sum cannot overflow.
    for (const auto& file : revision.spec.files) info.bytes += std::max<std::int64_t>(0, file.size);
  }
  for (const auto& file : revision.spec.files) {
    info.blobs.push_back({.sha256 = file.sha256, .size = std::max<std::int64_t>(0, file.size)});
  }
  std::sort(info.blobs.begin(), info.blobs.end(),
            [](const BlobInfo& a, const BlobInfo& b) { return a.sha256 < b.sha256; });
  info.blobs.erase(
      std::unique(info.blobs.begin(), info.blobs.end(),
                  [](const BlobInfo& a, const BlobInfo& b) { return a.sha256 == b.sha256; }),
      info.blobs.end());
  return info;
}

NodeCacheInfo MakeNodeCacheInfo(const core::api::ModelCache& cache) {
  NodeCacheInfo info;
  info.node = cache.metadata.name;
  if (!cache.status) return info;
  info.has_status = true;
  info.capacity_bytes = cache.status->capacity_bytes;
  info.used_bytes = cache.status->used_bytes;
  info.reserved_bytes = cache.status->reserved_bytes;
  info.high_watermark_bytes = cache.status->high_watermark_bytes;
  info.reclaimable_bytes = cache.status->reclaimable_bytes;
  for (const auto& revision : cache.status->revisions) {
    if (revision.digest.empty()) continue;
    info.Set(revision.digest, {.state = revision.state,
                               .bytes_done = revision.bytes_done,
                               .bytes_total = revision.bytes_total});
    if (revision.state == core::api::kCacheStateReady && revision.protection.empty() &&
        revision.unique_bytes > 0) {
      info.evictable.push_back(
          {.unique_bytes = revision.unique_bytes, .last_used = revision.last_used});
    }
  }
  // nullopt sorts first: a revision no pod ever used here is the coldest.
  std::ranges::stable_sort(info.evictable, {}, &EvictableRevision::last_used);
  info.IndexDigests();
  return info;
}

namespace {

using FileIndex = std::unordered_map<std::string, std::vector<const RevisionInfo*>>;

// Only revisions with a digest: a node's cache names what it holds by digest.
void IndexFiles(FileIndex& index, const RevisionInfo& revision) {
  if (revision.digest.empty()) return;
  for (const BlobInfo& blob : revision.blobs) index[blob.sha256].push_back(&revision);
}

void UnindexFiles(FileIndex& index, const RevisionInfo& revision) {
  for (const BlobInfo& blob : revision.blobs) {
    auto found = index.find(blob.sha256);
    if (found == index.end()) continue;
    std::erase(found->second, &revision);
    if (found->second.empty()) index.erase(found);
  }
}

// The other digests that list some of the revision's files.
std::vector<SharingDigest> FindSharingDigests(const RevisionInfo& revision,
                                              const FileIndex& index) {
  std::vector<SharingDigest> out;
  std::unordered_map<std::string_view, std::size_t> slot;  // digest -> index into out
  for (std::uint32_t blob = 0; blob < revision.blobs.size(); ++blob) {
    const auto holders = index.find(revision.blobs[blob].sha256);
    if (holders == index.end()) continue;
    for (const RevisionInfo* other : holders->second) {
      if (other->digest == revision.digest) continue;  // its own entry does not count
      const auto [at, added] = slot.try_emplace(other->digest, out.size());
      if (added) {
        out.push_back({.digest = other->digest,
                       .key = DigestHash::KeyOf(std::hash<std::string>{}(other->digest))});
      }
      SharingDigest& sharing = out[at->second];
      if (sharing.blobs.empty() || sharing.blobs.back() != blob) {
        sharing.blobs.push_back(blob);
        sharing.bytes += revision.blobs[blob].size;
      }
    }
  }
  return out;
}

}  // namespace

CacheInventory::CacheInventory() : caches_(std::make_unique<NodeCacheTable>()) {}
CacheInventory::~CacheInventory() = default;

void CacheInventory::UpsertRevision(RevisionInfo revision) {
  auto entry = std::make_shared<const RevisionInfo>(std::move(revision));
  const std::unique_lock lock(mutex_);
  auto& slot = revisions_[entry->key];
  if (slot) UnindexFiles(by_blob_, *slot);
  IndexFiles(by_blob_, *entry);
  slot = std::move(entry);
}

void CacheInventory::RemoveRevision(const std::string& key) {
  const std::unique_lock lock(mutex_);
  auto found = revisions_.find(key);
  if (found == revisions_.end()) return;
  UnindexFiles(by_blob_, *found->second);
  revisions_.erase(found);
}

std::int64_t CacheInventory::HeldBytes(const RevisionInfo& revision,
                                       const NodeCacheInfo& cache) const {
  // Non-owning: the aliasing constructor with an empty owner.
  const std::shared_ptr<const NodeCacheInfo> one(std::shared_ptr<const NodeCacheInfo>(), &cache);
  return Holdings(revision, std::span(&one, 1)).front().held_bytes;
}

RevisionHoldings CacheInventory::HoldingsOf(const RevisionInfo& revision) const {
  std::vector<SharingDigest> sharing;
  if (!revision.blobs.empty()) {
    // Copied out, so informer updates wait only for the index look-ups, not the whole request.
    const std::shared_lock lock(mutex_);
    sharing = FindSharingDigests(revision, by_blob_);
  }
  return RevisionHoldings(revision, std::move(sharing));
}

std::vector<NodeHolding> CacheInventory::Holdings(
    const RevisionInfo& revision,
    std::span<const std::shared_ptr<const NodeCacheInfo>> caches) const {
  return HoldingsOf(revision).Of(caches);
}

void CacheInventory::UpsertCache(NodeCacheInfo cache) {
  if (!cache.digests_indexed) cache.IndexDigests();
  auto entry = std::make_shared<const NodeCacheInfo>(std::move(cache));
  const std::unique_lock lock(mutex_);
  caches_->Upsert(std::move(entry));
}

void CacheInventory::RemoveCache(const std::string& node) {
  const std::unique_lock lock(mutex_);
  caches_->Remove(node);
}

std::shared_ptr<const RevisionInfo> CacheInventory::FindRevision(const std::string& key) const {
  const std::shared_lock lock(mutex_);
  const auto found = revisions_.find(key);
  return found == revisions_.end() ? nullptr : found->second;
}

std::vector<std::shared_ptr<const NodeCacheInfo>> CacheInventory::FindCaches(
    std::span<const std::string> nodes) const {
  const std::shared_lock lock(mutex_);
  return caches_->FindMany(nodes);
}

std::size_t CacheInventory::RevisionCount() const {
  const std::shared_lock lock(mutex_);
  return revisions_.size();
}

std::size_t CacheInventory::CacheCount() const {
  const std::shared_lock lock(mutex_);
  return caches_->size();
}

}  // namespace modelplane::extender
