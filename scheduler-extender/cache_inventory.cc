#include "scheduler-extender/cache_inventory.h"

#include <algorithm>
#include <mutex>

#include "core/api/model_revocation.h"
#include "core/api/object_key.h"
#include "core/api/revision_digest.h"

namespace modelplane::extender {

const CachedRevisionInfo* NodeCacheInfo::Find(const std::string& digest) const {
  if (digest.empty()) return nullptr;
  const auto found = revisions.find(digest);
  return found == revisions.end() ? nullptr : &found->second;
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
    info.revisions[revision.digest] = {.state = revision.state,
                                       .bytes_done = revision.bytes_done,
                                       .bytes_total = revision.bytes_total};
    if (revision.state == core::api::kCacheStateReady && revision.protection.empty() &&
        revision.unique_bytes > 0) {
      info.evictable.push_back(
          {.unique_bytes = revision.unique_bytes, .last_used = revision.last_used});
    }
  }
  // nullopt sorts first: a revision no pod ever used here is the coldest.
  std::ranges::stable_sort(info.evictable, {}, &EvictableRevision::last_used);
  return info;
}

namespace {

void Unindex(
    std::unordered_map<std::string, std::vector<std::shared_ptr<const RevisionInfo>>>& index,
    const RevisionInfo& revision) {
  auto found = index.find(revision.digest);
  if (found == index.end()) return;
  std::erase_if(found->second, [&](const auto& entry) { return entry->key == revision.key; });
  if (found->second.empty()) index.erase(found);
}

}  // namespace

void CacheInventory::UpsertRevision(RevisionInfo revision) {
  auto entry = std::make_shared<const RevisionInfo>(std::move(revision));
  const std::unique_lock lock(mutex_);
  auto& slot = revisions_[entry->key];
  if (slot) Unindex(by_digest_, *slot);
  if (!entry->digest.empty()) by_digest_[entry->digest].push_back(entry);
  slot = std::move(entry);
}

void CacheInventory::RemoveRevision(const std::string& key) {
  const std::unique_lock lock(mutex_);
  auto found = revisions_.find(key);
  if (found == revisions_.end()) return;
  Unindex(by_digest_, *found->second);
  revisions_.erase(found);
}

std::int64_t CacheInventory::HeldBytes(const RevisionInfo& revision,
                                       const NodeCacheInfo& cache) const {
  if (revision.blobs.empty()) return 0;
  std::vector<bool> held(revision.blobs.size(), false);
  const std::shared_lock lock(mutex_);
  for (const auto& [digest, entry] : cache.revisions) {
    if (digest == revision.digest || entry.state != core::api::kCacheStateReady) continue;
    const auto others = by_digest_.find(digest);
    if (others == by_digest_.end() || others->second.empty()) continue;
    // Both lists are sorted by sha256: one merge pass.
    const std::vector<BlobInfo>& blobs = others->second.front()->blobs;
    std::size_t mine = 0;
    for (const BlobInfo& blob : blobs) {
      while (mine < revision.blobs.size() && revision.blobs[mine].sha256 < blob.sha256) ++mine;
      if (mine < revision.blobs.size() && revision.blobs[mine].sha256 == blob.sha256) {
        held[mine] = true;
      }
    }
  }
  std::int64_t bytes = 0;
  for (std::size_t index = 0; index < held.size(); ++index) {
    if (held[index]) bytes += revision.blobs[index].size;
  }
  return bytes;
}

void CacheInventory::UpsertCache(NodeCacheInfo cache) {
  auto entry = std::make_shared<const NodeCacheInfo>(std::move(cache));
  const std::unique_lock lock(mutex_);
  caches_[entry->node] = std::move(entry);
}

void CacheInventory::RemoveCache(const std::string& node) {
  const std::unique_lock lock(mutex_);
  caches_.erase(node);
}

std::shared_ptr<const RevisionInfo> CacheInventory::FindRevision(const std::string& key) const {
  const std::shared_lock lock(mutex_);
  const auto found = revisions_.find(key);
  return found == revisions_.end() ? nullptr : found->second;
}

std::vector<std::shared_ptr<const NodeCacheInfo>> CacheInventory::FindCaches(
    std::span<const std::string> nodes) const {
  std::vector<std::shared_ptr<const NodeCacheInfo>> out;
  out.reserve(nodes.size());
  const std::shared_lock lock(mutex_);
  for (const std::string& node : nodes) {
    const auto found = caches_.find(node);
    out.push_back(found == caches_.end() ? nullptr : found->second);
  }
  return out;
}

std::size_t CacheInventory::RevisionCount() const {
  const std::shared_lock lock(mutex_);
  return revisions_.size();
}

std::size_t CacheInventory::CacheCount() const {
  const std::shared_lock lock(mutex_);
  return caches_.size();
}

}  // namespace modelplane::extender
