// A BlobCatalog over the cache store's on-disk layout, <cache-root>/blobs/sha256/<64 hex>, for
// `serve-peers` until the store's own catalog replaces it.
//
// It does not hash anything: it trusts the store's invariant that a file under blobs/ always
// matches its name (the store writes blobs elsewhere, verifies them, and only then renames them
// into blobs/). Anything else there, a directory, a symlink, a special file, is not found.
//
// Thread safety: immutable after construction; FindVerifiedBlob may run on many threads at once.
#pragma once

#include <filesystem>
#include <optional>

#include "node-agent/store/blob_catalog.h"

namespace modelplane::agent {

class DirectoryBlobCatalog final : public BlobCatalog {
 public:
  explicit DirectoryBlobCatalog(const std::filesystem::path& cache_root)
      : blobs_(cache_root / "blobs" / "sha256") {}

  [[nodiscard]] std::optional<VerifiedBlob> FindVerifiedBlob(
      const core::Sha256Bytes& digest) const override;

 private:
  std::filesystem::path blobs_;
};

}  // namespace modelplane::agent
