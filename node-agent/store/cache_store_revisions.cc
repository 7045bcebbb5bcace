// Revisions in the cache store: manifests (kept in memory in step with the disk) and their
// folder views. Removal takes the revision out of memory first, then its manifest from disk
// (synced), then the view; the blobs are left to RemoveUnreferencedBlobs, so a crash at any
// step leaves no manifest that names a missing blob.
#include <algorithm>

#include <fmt/format.h>
#include <unistd.h>

#include "node-agent/store/cache_store.h"
#include "node-agent/store/durable_file.h"
#include "node-agent/store/revision_view.h"
#include "node-agent/store/store_files.h"

namespace modelplane::agent {

core::Status CacheStore::PublishRevision(const RevisionManifest& manifest) {
  std::lock_guard writes(revision_writes_);
  {
    std::lock_guard lock(mutex_);
    for (const ManifestFile& file : manifest.files) {
      auto blob = blobs_.find(file.sha256);
      if (blob == blobs_.end() || blob->second != file.size) {
        return core::MakeError(core::ErrorCode::kInternal,
                               fmt::format("revision {} names {} ({}), which is not published",
                                           core::FormatDigest(manifest.revision_digest), file.path,
                                           core::FormatDigest(file.sha256)));
      }
    }
  }
  if (auto view = WriteRevisionView(manifest); !view) return view;
  if (auto written = WriteFileDurably(layout_.RevisionPath(manifest.revision_digest),
                                      SerializeManifest(manifest));
      !written) {
    return written;
  }
  std::lock_guard lock(mutex_);
  revisions_.insert_or_assign(manifest.revision_digest, manifest);
  return core::Ok();
}

core::Status CacheStore::WriteRevisionView(const RevisionManifest& manifest) {
  // A view that is already right stays: it may be bind-mounted into pods (node-agent/csi), and
  // rebuilding it would unlink the files they read.
  if (ViewMatches(layout_, manifest)) return core::Ok();
  return BuildRevisionView(layout_, manifest);
}

void CacheStore::RemoveRevisionView(const core::Sha256Bytes& revision_digest) {
  RemoveTree(layout_.RevisionView(revision_digest));
}

std::optional<RevisionManifest> CacheStore::FindRevision(
    const core::Sha256Bytes& revision_digest) const {
  std::lock_guard lock(mutex_);
  auto found = revisions_.find(revision_digest);
  if (found == revisions_.end() || !AllBlobsPublished(found->second)) return std::nullopt;
  return found->second;
}

std::vector<RevisionManifest> CacheStore::ListRevisions() const {
  std::lock_guard lock(mutex_);
  std::vector<RevisionManifest> revisions;
  for (const auto& [digest, manifest] : revisions_) {
    if (AllBlobsPublished(manifest)) revisions.push_back(manifest);
  }
  return revisions;
}

bool CacheStore::AllBlobsPublished(const RevisionManifest& manifest) const {
  return std::ranges::all_of(manifest.files, [&](const ManifestFile& file) {
    auto blob = blobs_.find(file.sha256);
    return blob != blobs_.end() && blob->second == file.size;
  });
}

core::Status CacheStore::RemoveRevision(const core::Sha256Bytes& revision_digest) {
  std::lock_guard writes(revision_writes_);
  {
    // Not Ready from here on, before anything on disk changes.
    std::lock_guard lock(mutex_);
    revisions_.erase(revision_digest);
  }
  const auto path = layout_.RevisionPath(revision_digest);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return std::unexpected(ErrnoError(errno, "removing", path));
  }
  // Durable before the view and the blobs go: a manifest that came back after a crash would
  // name blobs that are gone.
  if (auto synced = SyncDirectory(layout_.RevisionDirectory()); !synced) return synced;
  RemoveRevisionView(revision_digest);
  return core::Ok();
}

void CacheStore::DropRevisionsNaming(const core::Sha256Bytes& blob) {
  std::vector<core::Sha256Bytes> naming;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [digest, manifest] : revisions_) {
      if (std::ranges::any_of(manifest.files,
                              [&](const ManifestFile& file) { return file.sha256 == blob; })) {
        naming.push_back(digest);
      }
    }
  }
  for (const core::Sha256Bytes& digest : naming) (void)RemoveRevision(digest);
}

}  // namespace modelplane::agent
