#include "node-agent/peer/directory_blob_catalog.h"

#include <sys/stat.h>

namespace modelplane::agent {

std::optional<VerifiedBlob> DirectoryBlobCatalog::FindVerifiedBlob(
    const core::Sha256Bytes& digest) const {
  std::filesystem::path path = blobs_ / core::ToHex(digest);
  struct stat info {};
  // lstat: a symlink could point anywhere, and the store never makes one.
  if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  return VerifiedBlob{.path = std::move(path), .size = static_cast<std::uint64_t>(info.st_size)};
}

}  // namespace modelplane::agent
