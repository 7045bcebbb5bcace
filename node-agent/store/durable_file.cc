#include "node-agent/store/durable_file.h"

#include <cstring>
#include <random>
#include <system_error>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace modelplane::agent {

core::Error ErrnoError(int error_number, std::string_view what, const std::filesystem::path& path) {
  core::ErrorCode code = core::ErrorCode::kIo;
  switch (error_number) {
    case ENOSPC:
    case EDQUOT: code = core::ErrorCode::kResourceExhausted; break;
    case ENOENT: code = core::ErrorCode::kNotFound; break;
    case EACCES:
    case EPERM: code = core::ErrorCode::kPermissionDenied; break;
    default: break;
  }
  return core::Error(
      code,
      fmt::format("{} {}: {}", what, path.string(), std::system_category().message(error_number)),
      false);
}

core::Status SyncDirectory(const std::filesystem::path& directory) {
  core::UniqueFd fd(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return std::unexpected(ErrnoError(errno, "opening folder", directory));
  if (::fsync(fd.get()) != 0)
    return std::unexpected(ErrnoError(errno, "syncing folder", directory));
  return core::Ok();
}

core::Status WriteAllAt(int fd, const void* data, std::size_t length, std::uint64_t offset,
                        const std::filesystem::path& path) {
  const auto* bytes = static_cast<const char*>(data);
  std::size_t done = 0;
  while (done < length) {
    const ssize_t written =
        ::pwrite(fd, bytes + done, length - done, static_cast<off_t>(offset + done));
    if (written < 0) {
      if (errno == EINTR) continue;
      return std::unexpected(ErrnoError(errno, "writing", path));
    }
    if (written == 0) return std::unexpected(ErrnoError(EIO, "writing", path));
    done += static_cast<std::size_t>(written);
  }
  return core::Ok();
}

core::Status ReadAllAt(int fd, void* data, std::size_t length, std::uint64_t offset,
                       const std::filesystem::path& path) {
  auto* bytes = static_cast<char*>(data);
  std::size_t done = 0;
  while (done < length) {
    const ssize_t got = ::pread(fd, bytes + done, length - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return std::unexpected(ErrnoError(errno, "reading", path));
    }
    if (got == 0) {
      return core::MakeError(core::ErrorCode::kDataLoss,
                             fmt::format("{} ends at {} bytes, {} expected", path.string(),
                                         offset + done, offset + length));
    }
    done += static_cast<std::size_t>(got);
  }
  return core::Ok();
}

core::Status WriteFileDurably(const std::filesystem::path& path, std::string_view content) {
  thread_local std::mt19937_64 random{std::random_device{}()};
  const std::filesystem::path temporary =
      path.parent_path() / fmt::format(".{}.{:016x}.tmp", path.filename().string(), random());
  {
    core::UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (!fd.valid()) return std::unexpected(ErrnoError(errno, "creating", temporary));
    auto written = WriteAllAt(fd.get(), content.data(), content.size(), 0, temporary);
    if (written && ::fsync(fd.get()) != 0) {
      written = std::unexpected(ErrnoError(errno, "syncing", temporary));
    }
    if (!written) {
      ::unlink(temporary.c_str());
      return written;
    }
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    return std::unexpected(ErrnoError(saved, "renaming into place", path));
  }
  return SyncDirectory(path.parent_path());
}

}  // namespace modelplane::agent
