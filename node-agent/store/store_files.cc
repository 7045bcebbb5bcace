#include "node-agent/store/store_files.h"

#include <algorithm>

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "node-agent/store/revision_view.h"

namespace modelplane::agent {

std::optional<core::Sha256Bytes> DigestFromName(std::string_view name) {
  if (name.size() != 64) return std::nullopt;
  auto digest = core::ParseDigest(name, /*allow_bare=*/true);
  if (!digest || core::ToHex(*digest) != name) return std::nullopt;
  return *digest;
}

bool IsMemoryFilesystem(const std::filesystem::path& path) {
  struct statfs info {};
  if (::statfs(path.c_str(), &info) != 0) return false;
  return info.f_type == TMPFS_MAGIC || info.f_type == RAMFS_MAGIC;
}

std::optional<std::uint64_t> RegularFileSize(const std::filesystem::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  return static_cast<std::uint64_t>(info.st_size);
}

bool IsFullyAllocated(const std::filesystem::path& path, std::uint64_t size) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 &&
         static_cast<std::uint64_t>(info.st_blocks) * 512 >= size;
}

std::vector<std::filesystem::path> ListFolder(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> entries;
  std::error_code error;
  for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end;
       it.increment(error)) {
    entries.push_back(it->path());
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

void RemovePath(const std::filesystem::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return;
  if (S_ISDIR(info.st_mode)) {
    RemoveTree(path);
  } else {
    ::unlink(path.c_str());
  }
}

}  // namespace modelplane::agent
