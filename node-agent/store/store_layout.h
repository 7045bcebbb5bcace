// Where things live under one cache root. Everything the store writes is under these folders:
//
//   <root>/LOCK                               held with flock by the one agent using the root
//   <root>/blobs/sha256/<hex>                 verified file contents, named by their sha256
//   <root>/revisions/sha256/<hex>.json        one manifest per revision digest: its files' paths,
//                                             sizes and blob digests; present only once every
//                                             blob it names is published
//   <root>/tmp/<hex>.partial, <hex>.progress  stagings in progress and which ranges they hold
//   <root>/quarantine/<hex>.<unix-nanos>      bytes that failed verification, kept for a look
//   <root>/models/<hex>/<path>                a ready revision as its files: hard links to the
//                                             blobs (revision_view.h), so loaders open it like a
//                                             model folder and the CSI plugin can bind-mount it
//   <root>/csi/volumes/<hex>.json             the CSI plugin's in-use leases, one per published
//                                             volume (node-agent/csi/volume_leases.h)
//   <root>/eviction/uses.json                 how often each revision was used, aged
//                                             (node-agent/eviction/use_history.h)
//   <root>/possession/proofs.json             the revisions whose own sources were shown to
//                                             serve what is held for their digest
//                                             (node-agent/possession/possession_ledger.h)
//
// Thread safety: immutable after construction.
#pragma once

#include <filesystem>
#include <string>

#include "core/digest/sha256.h"

namespace modelplane::agent {

class StoreLayout {
 public:
  explicit StoreLayout(std::filesystem::path root) : root_(std::move(root)) {}

  [[nodiscard]] const std::filesystem::path& root() const { return root_; }
  [[nodiscard]] std::filesystem::path LockFile() const { return root_ / "LOCK"; }
  [[nodiscard]] std::filesystem::path BlobDirectory() const { return root_ / "blobs" / "sha256"; }
  [[nodiscard]] std::filesystem::path RevisionDirectory() const {
    return root_ / "revisions" / "sha256";
  }
  [[nodiscard]] std::filesystem::path TemporaryDirectory() const { return root_ / "tmp"; }
  [[nodiscard]] std::filesystem::path QuarantineDirectory() const { return root_ / "quarantine"; }
  [[nodiscard]] std::filesystem::path ModelDirectory() const { return root_ / "models"; }
  [[nodiscard]] std::filesystem::path CsiVolumeDirectory() const {
    return root_ / "csi" / "volumes";
  }
  [[nodiscard]] std::filesystem::path UseHistoryPath() const {
    return root_ / "eviction" / "uses.json";
  }
  [[nodiscard]] std::filesystem::path PossessionLedgerPath() const {
    return root_ / "possession" / "proofs.json";
  }
  // The folder view of a ready revision (what `load(revision)` opens).
  [[nodiscard]] std::filesystem::path RevisionView(const core::Sha256Bytes& digest) const {
    return ModelDirectory() / core::ToHex(digest);
  }

  [[nodiscard]] std::filesystem::path BlobPath(const core::Sha256Bytes& digest) const {
    return BlobDirectory() / core::ToHex(digest);
  }
  [[nodiscard]] std::filesystem::path RevisionPath(const core::Sha256Bytes& digest) const {
    return RevisionDirectory() / (core::ToHex(digest) + ".json");
  }
  [[nodiscard]] std::filesystem::path PartialPath(const core::Sha256Bytes& digest) const {
    return TemporaryDirectory() / (core::ToHex(digest) + ".partial");
  }
  [[nodiscard]] std::filesystem::path ProgressPath(const core::Sha256Bytes& digest) const {
    return TemporaryDirectory() / (core::ToHex(digest) + ".progress");
  }

 private:
  std::filesystem::path root_;
};

}  // namespace modelplane::agent
