// What a peer server needs from the node's cache: the verified blobs it may serve, by digest.
// The cache store implements it; nothing unverified is ever found through it.
//
// Thread safety: FindVerifiedBlob may be called from many threads at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "core/digest/sha256.h"

namespace modelplane::agent {

struct VerifiedBlob {
  // Open it to serve it: once open, a later garbage collection unlinks but cannot change it.
  std::filesystem::path path;
  std::uint64_t size = 0;
};

class BlobCatalog {
 public:
  virtual ~BlobCatalog() = default;
  [[nodiscard]] virtual std::optional<VerifiedBlob> FindVerifiedBlob(
      const core::Sha256Bytes& digest) const = 0;
};

}  // namespace modelplane::agent
