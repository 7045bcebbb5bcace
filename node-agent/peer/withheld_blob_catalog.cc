#include "node-agent/peer/withheld_blob_catalog.h"

namespace modelplane::agent {

std::optional<VerifiedBlob> WithheldBlobCatalog::FindVerifiedBlob(
    const core::Sha256Bytes& digest) const {
  {
    std::lock_guard lock(mutex_);
    if (withheld_.contains(digest)) return std::nullopt;
  }
  return inner_.FindVerifiedBlob(digest);
}

void WithheldBlobCatalog::SetWithheld(std::set<core::Sha256Bytes> blobs) {
  std::lock_guard lock(mutex_);
  withheld_ = std::move(blobs);
}

std::size_t WithheldBlobCatalog::withheld() const {
  std::lock_guard lock(mutex_);
  return withheld_.size();
}

}  // namespace modelplane::agent
