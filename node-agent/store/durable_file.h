// Small POSIX helpers for files that must survive a crash: write-then-rename publication with the
// fsyncs that make it durable, and errno mapped to core::Error. The store builds on these so
// that a blob or manifest is either absent or complete, never half-written, after `kill -9` or a
// power cut.
// Thread safety: free functions; concurrent calls on different paths are independent.
#pragma once

#include <cerrno>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/error/error.h"
#include "core/io/unique_fd.h"

namespace modelplane::agent {

// kResourceExhausted for ENOSPC/EDQUOT, kNotFound for ENOENT, kPermissionDenied for EACCES/EPERM,
// kIo otherwise; the message is "<what> <path>: <strerror>".
[[nodiscard]] core::Error ErrnoError(int error_number, std::string_view what,
                                     const std::filesystem::path& path);

[[nodiscard]] core::Status SyncDirectory(const std::filesystem::path& directory);

// Writes `content` to a unique temporary name beside `path`, fsyncs it, renames it over `path`
// and fsyncs the folder.
[[nodiscard]] core::Status WriteFileDurably(const std::filesystem::path& path,
                                            std::string_view content);

// Full-length pwrite / pread, restarting after EINTR and short transfers.
[[nodiscard]] core::Status WriteAllAt(int fd, const void* data, std::size_t length,
                                      std::uint64_t offset, const std::filesystem::path& path);
[[nodiscard]] core::Status ReadAllAt(int fd, void* data, std::size_t length, std::uint64_t offset,
                                     const std::filesystem::path& path);

}  // namespace modelplane::agent
