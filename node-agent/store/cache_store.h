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
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
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

  // Writes the revision's folder view (models/<hex>/<path> -> blob) and then its manifest;
  // every blob it names must be published.
  [[nodiscard]] core::Status PublishRevision(const RevisionManifest& manifest);
  // Ready revisions, from memory: manifests are read from disk once, when the store opens (the
  // store is the only writer of its root; the lock sees to that), and the agent's control loop
  // asks on every pass. A revision counts only while every blob it names is published.
  [[nodiscard]] std::optional<RevisionManifest> FindRevision(
      const core::Sha256Bytes& revision_digest) const;
  [[nodiscard]] std::vector<RevisionManifest> ListRevisions() const;
  // Removes the manifest; its blobs stay until CollectGarbage finds them unreferenced.
  [[nodiscard]] core::Status RemoveRevision(const core::Sha256Bytes& revision_digest);

  // Removes blobs no manifest names (except those being staged or held by `keep_blobs`),
  // partial stagings not in progress, and the quarantine.
  [[nodiscard]] core::Result<GarbageReport> CollectGarbage(
      const std::set<core::Sha256Bytes>& keep_blobs = {});

  // Re-hashes a published blob; a mismatch moves it to quarantine and drops every manifest
  // that names it.
  [[nodiscard]] core::Result<BlobVerification> VerifyBlob(const core::Sha256Bytes& digest);
  [[nodiscard]] std::vector<core::Sha256Bytes> ListBlobs() const;

 private:
  CacheStore(CacheStoreOptions options, core::UniqueFd lock, std::uint64_t capacity);
  [[nodiscard]] core::Status Recover();
  [[nodiscard]] core::Status Quarantine(const std::filesystem::path& path,
                                        const core::Sha256Bytes& digest);
  void DropRevisionsNaming(const core::Sha256Bytes& blob);
  // Under mutex_.
  [[nodiscard]] bool AllBlobsPublished(const RevisionManifest& manifest) const;
  [[nodiscard]] core::Status WriteRevisionView(const RevisionManifest& manifest);
  void RemoveRevisionView(const core::Sha256Bytes& revision_digest);

  const CacheStoreOptions options_;
  const StoreLayout layout_;
  core::UniqueFd lock_;
  SpaceLedger ledger_;
  RecoveryReport recovery_;

  mutable std::mutex mutex_;
  std::map<core::Sha256Bytes, std::uint64_t> blobs_;         // published: digest -> size
  std::map<core::Sha256Bytes, RevisionManifest> revisions_;  // as on disk under revisions/
  std::set<core::Sha256Bytes> staging_;                      // BeginBlob .. Publish/Abandon/Suspend
  // Space of partial stagings found at Open, handed to BeginBlob when it resumes them.
  std::map<core::Sha256Bytes, Reservation> recovered_partials_;
};

}  // namespace modelplane::agent
