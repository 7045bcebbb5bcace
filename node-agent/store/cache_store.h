// The node's content-addressed model cache: verified blobs named by sha256, one manifest per
// staged revision, temporary stagings that survive restarts, and a quarantine for bytes that
// failed verification. Layout in store_layout.h.
//
// Invariants:
// - A file under blobs/ always matches its name: it gets there only by Publish, after the caller
//   hashed it and Publish compared the digest and size, then fsync, rename, fsync of the folder.
// - A revision manifest exists only when every blob it names is published; Open drops
//   manifests whose blobs are gone, so a revision is never reported ready without its bytes.
// - One process per root: Open takes an exclusive flock on LOCK and fails if another holds it.
// - Space is reserved before a staging writes (SpaceLedger), so concurrent stagings cannot
//   overcommit the disk.
// - A blob is removed only when no manifest names it, no staging stages it and no BlobHold
//   holds it (a fetch holds every blob of its revision from before it looks for local copies
//   until it is over), so eviction never takes a blob from under a staging that counted on it.
// - Removing a revision takes it out of memory, then unlinks its manifest and syncs the folder,
//   and only then removes its view and (RemoveUnreferencedBlobs) its blobs: after a crash at any
//   point a manifest on disk still has every blob it names.
//
// The code is split by idea: cache_store.cc (open, blobs, publication), cache_store_recovery.cc
// (what Open finds and repairs), cache_store_revisions.cc (manifests and their views),
// cache_store_collection.cc (holds, removal of unreferenced blobs, garbage collection, verify).
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/digest/sha256.h"
#include "core/error/error.h"
#include "core/io/unique_fd.h"
#include "node-agent/store/blob_catalog.h"
#include "node-agent/store/partial_blob.h"
#include "node-agent/store/revision_manifest.h"
#include "node-agent/store/space_ledger.h"
#include "node-agent/store/store_layout.h"

namespace modelplane::agent {

struct CacheStoreOptions {
  std::filesystem::path root;
  // 0: the size of the filesystem holding the root.
  std::uint64_t capacity_bytes = 0;
  // Kept free on the filesystem whatever the capacity says.
  std::uint64_t headroom_bytes = 64ull << 20;
  bool allow_direct_io = true;
};

// What Open found and repaired.
struct RecoveryReport {
  std::size_t blobs = 0;
  std::size_t revisions = 0;
  std::size_t resumable_partials = 0;
  std::size_t dropped_partials = 0;   // no usable progress record
  std::size_t dropped_revisions = 0;  // a blob it named was missing or had the wrong size
};

struct GarbageReport {
  std::size_t blobs_removed = 0;
  std::uint64_t bytes_freed = 0;
  std::size_t partials_removed = 0;
  std::size_t quarantined_removed = 0;
};

struct BlobVerification {
  core::Sha256Bytes digest{};
  bool ok = false;
  std::string problem;  // when not ok; the blob was moved to quarantine
};

class CacheStore;

// Keeps blobs from removal while it lives (see the invariants above). Move-only; must not
// outlive its store.
class BlobHold {
 public:
  BlobHold() = default;
  BlobHold(const BlobHold&) = delete;
  BlobHold& operator=(const BlobHold&) = delete;
  BlobHold(BlobHold&& other) noexcept;
  BlobHold& operator=(BlobHold&& other) noexcept;
  ~BlobHold();
  void Release();

 private:
  friend class CacheStore;
  BlobHold(CacheStore* store, std::uint64_t id) : store_(store), id_(id) {}
  CacheStore* store_ = nullptr;
  std::uint64_t id_ = 0;
};

struct BlobRemovalReport {
  std::size_t blobs_removed = 0;
  std::uint64_t bytes_freed = 0;
  std::size_t kept_referenced = 0;  // candidates a manifest, a staging or a hold still needs
  bool stopped = false;             // `before_each` said stop
};

class CacheStore final : public BlobCatalog {
 public:
  [[nodiscard]] static core::Result<std::unique_ptr<CacheStore>> Open(CacheStoreOptions options);
  CacheStore(const CacheStore&) = delete;
  CacheStore& operator=(const CacheStore&) = delete;
  ~CacheStore() override;

  [[nodiscard]] const StoreLayout& layout() const { return layout_; }
  [[nodiscard]] const RecoveryReport& recovery() const { return recovery_; }
  [[nodiscard]] SpaceUsage Usage() const { return ledger_.Usage(); }

  // BlobCatalog: published blobs only.
  [[nodiscard]] std::optional<VerifiedBlob> FindVerifiedBlob(
      const core::Sha256Bytes& digest) const override;
  [[nodiscard]] bool HasBlob(const core::Sha256Bytes& digest) const;

  // Starts or resumes staging one blob. kAlreadyExists when it is already published;
  // kConflict (retryable) while another staging in this process holds the same blob;
  // kResourceExhausted when the space cannot be reserved.
  [[nodiscard]] core::Result<std::unique_ptr<PartialBlob>> BeginBlob(
      const core::Sha256Bytes& digest, std::uint64_t size, std::uint64_t range_size);
  // Publishes a finished staging whose bytes hash to `computed`. On a mismatch (digest or size)
  // the bytes go to quarantine and the result is kDataLoss. Either way the staging is over.
  [[nodiscard]] core::Status PublishBlob(std::unique_ptr<PartialBlob> partial,
                                         const core::Sha256Bytes& computed);
  // Ends a staging that will not be resumed (failure) and frees its space.
  void AbandonBlob(std::unique_ptr<PartialBlob> partial);
  // Ends a staging that may be resumed later (cancellation, shutdown): files stay.
  void SuspendBlob(std::unique_ptr<PartialBlob> partial);

  // Writes the revision's folder view (models/<hex>/<path>, hard links to the blobs, see
  // revision_view.h; a view already right is kept) and then its manifest; every blob it names
  // must be published.
  [[nodiscard]] core::Status PublishRevision(const RevisionManifest& manifest);
  // Ready revisions, from memory: manifests are read from disk once, when the store opens (the
  // store is the only writer of its root; the lock sees to that), and the agent's control loop
  // asks on every pass. A revision counts only while every blob it names is published.
  [[nodiscard]] std::optional<RevisionManifest> FindRevision(
      const core::Sha256Bytes& revision_digest) const;
  [[nodiscard]] std::vector<RevisionManifest> ListRevisions() const;
  // Takes the revision out of memory (FindRevision no longer finds it), unlinks its manifest
  // and syncs the folder, then removes its view. Its blobs stay until RemoveUnreferencedBlobs
  // or CollectGarbage finds them unreferenced. Removing what is not there succeeds.
  [[nodiscard]] core::Status RemoveRevision(const core::Sha256Bytes& revision_digest);

  // Holds `blobs` (published or not) against removal until the hold is released.
  [[nodiscard]] BlobHold HoldBlobs(const std::vector<core::Sha256Bytes>& blobs);
  // Removes the published blobs among `candidates` that no manifest names, no staging stages
  // and no hold holds; the rest stay (counted in kept_referenced). `before_each(size)` runs
  // before each unlink and may wait (pacing) or return false to stop. Syncs the folder.
  [[nodiscard]] core::Result<BlobRemovalReport> RemoveUnreferencedBlobs(
      const std::set<core::Sha256Bytes>& candidates,
      const std::function<bool(std::uint64_t size)>& before_each = {});
  // Published blobs and their sizes.
  [[nodiscard]] std::map<core::Sha256Bytes, std::uint64_t> BlobSizes() const;
  // Bytes a staging of these files would still have to reserve: distinct blobs not published,
  // less the space a recovered partial staging of one already holds.
  [[nodiscard]] std::uint64_t BytesToStage(const std::vector<ManifestFile>& files) const;

  // Removes blobs no manifest names (except those being staged, held, or in `keep_blobs`),
  // partial stagings not in progress, and the quarantine.
  [[nodiscard]] core::Result<GarbageReport> CollectGarbage(
      const std::set<core::Sha256Bytes>& keep_blobs = {});

  // Re-hashes a published blob; a mismatch moves it to quarantine and drops every manifest
  // that names it.
  [[nodiscard]] core::Result<BlobVerification> VerifyBlob(const core::Sha256Bytes& digest);
  [[nodiscard]] std::vector<core::Sha256Bytes> ListBlobs() const;

 private:
  friend class BlobHold;
  CacheStore(CacheStoreOptions options, core::UniqueFd lock, std::uint64_t capacity);
  [[nodiscard]] core::Status Recover();
  [[nodiscard]] core::Status RecoverRevisions();
  void RecoverTemporaryFiles();
  void ReleaseHold(std::uint64_t id);
  [[nodiscard]] core::Status Quarantine(const std::filesystem::path& path,
                                        const core::Sha256Bytes& digest);
  void DropRevisionsNaming(const core::Sha256Bytes& blob);
  // Under mutex_.
  [[nodiscard]] bool AllBlobsPublished(const RevisionManifest& manifest) const;
  [[nodiscard]] bool BlobReferenced(const core::Sha256Bytes& blob) const;
  [[nodiscard]] core::Status WriteRevisionView(const RevisionManifest& manifest);
  void RemoveRevisionView(const core::Sha256Bytes& revision_digest);

  const CacheStoreOptions options_;
  const StoreLayout layout_;
  core::UniqueFd lock_;
  SpaceLedger ledger_;
  const bool preallocate_;  // false on a memory filesystem (store_files.h)
  RecoveryReport recovery_;

  // Serialises what writes or removes manifests and views (publication, removal), so a view is
  // never rebuilt and removed at once. Taken before mutex_, never while holding it.
  std::mutex revision_writes_;
  mutable std::mutex mutex_;
  std::map<core::Sha256Bytes, std::uint64_t> blobs_;         // published: digest -> size
  std::map<core::Sha256Bytes, RevisionManifest> revisions_;  // as on disk under revisions/
  std::set<core::Sha256Bytes> staging_;                      // BeginBlob .. Publish/Abandon/Suspend
  // Space of partial stagings found at Open, handed to BeginBlob when it resumes them.
  std::map<core::Sha256Bytes, Reservation> recovered_partials_;
  std::map<std::uint64_t, std::vector<core::Sha256Bytes>> holds_;  // hold id -> blobs
  std::map<core::Sha256Bytes, std::size_t> held_;                  // blob -> holds naming it
  std::uint64_t next_hold_ = 1;
};

}  // namespace modelplane::agent
