#include "scheduler-extender/cache_inventory.h"

#include <algorithm>
#include <mutex>

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
  info.revoked = revision.spec.revoked;
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
  for (const auto& revision : cache.status->revisions) {
    if (revision.digest.empty()) continue;
    info.revisions[revision.digest] = {.state = revision.state,
                                       .bytes_done = revision.bytes_done,
                                       .bytes_total = revision.bytes_total};
  }
  return info;
}

void CacheInventory::UpsertRevision(RevisionInfo revision) {
  auto entry = std::make_shared<const RevisionInfo>(std::move(revision));
  const std::unique_lock lock(mutex_);
  revisions_[entry->key] = std::move(entry);
}

void CacheInventory::RemoveRevision(const std::string& key) {
  const std::unique_lock lock(mutex_);
  revisions_.erase(key);
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
