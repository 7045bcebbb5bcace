// Small filesystem helpers the parts of the cache store share. None throws: the store runs in
// a daemon that must come back after any crash, so a leftover it cannot parse (a folder where a
// file should be, a name it did not write) is moved aside or removed, never a reason to stop.
// Thread safety: free functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "core/digest/sha256.h"

namespace modelplane::agent {

// The digest a store file name spells (64 lower-case hex), or nullopt.
[[nodiscard]] std::optional<core::Sha256Bytes> DigestFromName(std::string_view name);

// The size of a regular file (not following a symlink), or nullopt.
[[nodiscard]] std::optional<std::uint64_t> RegularFileSize(const std::filesystem::path& path);

// Whether the filesystem holds blocks for all `size` bytes (a preallocated staging), or the
// file is sparse and writing it would still take space.
[[nodiscard]] bool IsFullyAllocated(const std::filesystem::path& path, std::uint64_t size);

// Whether `path` is on a filesystem held in memory (tmpfs, ramfs). There preallocating a file
// allocates the very pages its writes would allocate anyway (the same CPU time, 0.5 s per GiB
// on the benchmark VM), all at once before the first write, so the store does not preallocate.
[[nodiscard]] bool IsMemoryFilesystem(const std::filesystem::path& path);

// The entries of a folder, sorted; empty when it cannot be read.
[[nodiscard]] std::vector<std::filesystem::path> ListFolder(const std::filesystem::path& folder);

// Removes a file, a symlink or a whole folder tree (revision_view.h's RemoveTree); a missing
// path is fine.
void RemovePath(const std::filesystem::path& path);

}  // namespace modelplane::agent
