// Taking bytes out of the cache store: holds that keep blobs from removal, removal of blobs no
// manifest, staging or hold needs (what eviction and garbage collection share), the offline
// garbage collection, and verification that moves bad bytes to quarantine.
#include <algorithm>

#include <fmt/format.h>
#include <unistd.h>

#include "node-agent/store/cache_store.h"
#include "node-agent/store/durable_file.h"
#include "node-agent/store/store_files.h"

namespace modelplane::agent {

BlobHold::BlobHold(BlobHold&& other) noexcept
    : store_(std::exchange(other.store_, nullptr)), id_(std::exchange(other.id_, 0)) {}

BlobHold& BlobHold::operator=(BlobHold&& other) noexcept {
  if (this != &other) {
    Release();
    store_ = std::exchange(other.store_, nullptr);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

BlobHold::~BlobHold() {
  Release();
}

void BlobHold::Release() {
  if (store_ != nullptr) store_->ReleaseHold(id_);
  store_ = nullptr;
  id_ = 0;
}

BlobHold CacheStore::HoldBlobs(const std::vector<core::Sha256Bytes>& blobs) {
  std::lock_guard lock(mutex_);
  const std::uint64_t id = next_hold_++;
  std::vector<core::Sha256Bytes> distinct = blobs;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  for (const core::Sha256Bytes& blob : distinct) ++held_[blob];
  holds_.emplace(id, std::move(distinct));
  return BlobHold(this, id);
}

void CacheStore::ReleaseHold(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  auto hold = holds_.find(id);
  if (hold == holds_.end()) return;
  for (const core::Sha256Bytes& blob : hold->second) {
    auto count = held_.find(blob);
    if (count != held_.end() && --count->second == 0) held_.erase(count);
  }
  holds_.erase(hold);
}

bool CacheStore::BlobReferenced(const core::Sha256Bytes& blob) const {
  if (staging_.contains(blob) || held_.contains(blob)) return true;
  return std::ranges::any_of(revisions_, [&](const auto& entry) {
    return std::ranges::any_of(entry.second.files,
                               [&](const ManifestFile& file) { return file.sha256 == blob; });
  });
}

core::Result<BlobRemovalReport> CacheStore::RemoveUnreferencedBlobs(
    const std::set<core::Sha256Bytes>& candidates,
    const std::function<bool(std::uint64_t size)>& before_each) {
  BlobRemovalReport report;
  bool removed_any = false;
  for (const core::Sha256Bytes& digest : candidates) {
    std::uint64_t size = 0;
    {
      std::lock_guard lock(mutex_);
      auto blob = blobs_.find(digest);
      if (blob == blobs_.end()) continue;
      if (BlobReferenced(digest)) {
        ++report.kept_referenced;
        continue;
      }
      size = blob->second;
    }
    if (before_each && !before_each(size)) {
      report.stopped = true;
      break;
    }
    {
      // Checked again: a staging may have taken a hold while `before_each` waited. Out of the
      // map first, so no peer or fetch finds it while it is unlinked.
      std::lock_guard lock(mutex_);
      auto blob = blobs_.find(digest);
      if (blob == blobs_.end()) continue;
      if (BlobReferenced(digest)) {
        ++report.kept_referenced;
        continue;
      }
      blobs_.erase(blob);
    }
    const auto path = layout_.BlobPath(digest);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      const core::Error error = ErrnoError(errno, "removing", path);
      std::lock_guard lock(mutex_);
      blobs_.emplace(digest, size);  // still there, still verified
      return std::unexpected(error);
    }
    ledger_.RemoveUsed(size);
    removed_any = true;
    ++report.blobs_removed;
    report.bytes_freed += size;
  }
  if (removed_any) {
    if (auto synced = SyncDirectory(layout_.BlobDirectory()); !synced) {
      return std::unexpected(synced.error());
    }
  }
  return report;
}

core::Result<GarbageReport> CacheStore::CollectGarbage(
    const std::set<core::Sha256Bytes>& keep_blobs) {
  std::set<core::Sha256Bytes> candidates;
  for (const auto& [digest, size] : BlobSizes()) {
    if (!keep_blobs.contains(digest)) candidates.insert(digest);
  }
  auto removed = RemoveUnreferencedBlobs(candidates);
  if (!removed) return std::unexpected(removed.error());
  GarbageReport report{.blobs_removed = removed->blobs_removed,
                       .bytes_freed = removed->bytes_freed};
  {
    std::lock_guard lock(mutex_);
    for (auto it = recovered_partials_.begin(); it != recovered_partials_.end();) {
      if (keep_blobs.contains(it->first) || held_.contains(it->first)) {
        ++it;
        continue;
      }
      RemovePath(layout_.PartialPath(it->first));
      RemovePath(layout_.ProgressPath(it->first));
      ++report.partials_removed;
      it = recovered_partials_.erase(it);
    }
  }
  for (const auto& path : ListFolder(layout_.QuarantineDirectory())) {
    RemovePath(path);
    ++report.quarantined_removed;
  }
  return report;
}

core::Result<BlobVerification> CacheStore::VerifyBlob(const core::Sha256Bytes& digest) {
  const auto found = FindVerifiedBlob(digest);
  if (!found) {
    return core::MakeError(core::ErrorCode::kNotFound,
                           fmt::format("blob {} is not in the cache", core::FormatDigest(digest)));
  }
  BlobVerification result{.digest = digest};
  auto computed = core::Sha256OfFile(found->path.string());
  if (computed && *computed == digest && RegularFileSize(found->path) == found->size) {
    result.ok = true;
    return result;
  }
  result.problem = computed ? fmt::format("content hashes to {}", core::FormatDigest(*computed))
                            : computed.error().ToString();
  {
    std::lock_guard lock(mutex_);
    blobs_.erase(digest);
  }
  ledger_.RemoveUsed(found->size);
  DropRevisionsNaming(digest);
  (void)Quarantine(found->path, digest);
  return result;
}

std::vector<core::Sha256Bytes> CacheStore::ListBlobs() const {
  std::lock_guard lock(mutex_);
  std::vector<core::Sha256Bytes> digests;
  digests.reserve(blobs_.size());
  for (const auto& [digest, size] : blobs_) digests.push_back(digest);
  return digests;
}

}  // namespace modelplane::agent
