// The catalog the peer server serves from in the daemon: the store's verified blobs, less the
// ones the agent withholds. Revocation withholds every blob that only revoked revisions
// reference (node-agent/eviction/retention_policy.h): from the moment the control loop sees
// `revoked: true`, a request for such a blob is answered 404 like a blob this node never had,
// long before its bytes are purged (which waits for pods to unmount it).
//
// Thread safety: FindVerifiedBlob may run on many threads at once, SetWithheld from any thread.
// A request that found its blob before SetWithheld keeps streaming what it opened.
#pragma once

#include <mutex>
#include <optional>
#include <set>

#include "node-agent/store/blob_catalog.h"

namespace modelplane::agent {

class WithheldBlobCatalog final : public BlobCatalog {
 public:
  explicit WithheldBlobCatalog(const BlobCatalog& inner) : inner_(inner) {}

  [[nodiscard]] std::optional<VerifiedBlob> FindVerifiedBlob(
      const core::Sha256Bytes& digest) const override;

  // Replaces the withheld set.
  void SetWithheld(std::set<core::Sha256Bytes> blobs);
  [[nodiscard]] std::size_t withheld() const;

 private:
  const BlobCatalog& inner_;
  mutable std::mutex mutex_;
  std::set<core::Sha256Bytes> withheld_;
};

}  // namespace modelplane::agent
