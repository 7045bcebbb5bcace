// ReadBoundedFile: the whole content of a small file (a config, a certificate, a key, a JSON
// record) that must never make the caller read without bound.
//
// It reads at most one byte past the limit, so a file that is too big (or endless, as
// /dev/zero, or sized 0 by stat as procfs files are) costs limit + 1 bytes and a clear error,
// never memory in proportion to what a hostile or mistaken path holds. A missing file is
// kNotFound (callers that treat absence as "nothing yet" check for it), too big is
// kInvalidArgument (not kResourceExhausted, which callers read as "out of space"), a directory,
// fifo or socket kInvalidArgument too (a fifo is
// opened without blocking and refused, so a path swapped for one cannot hang the caller),
// anything else kIo or kPermissionDenied, each naming the path.
//
// Thread safety: a free function; safe from any thread.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error/error.h"
#include "core/io/unique_fd.h"

namespace modelplane::core {

[[nodiscard]] inline Result<std::string> ReadBoundedFile(const std::string& path,
                                                         std::size_t limit) {
  const auto failed = [&](int error_number, std::string_view what) {
    ErrorCode code = ErrorCode::kIo;
    if (error_number == ENOENT) code = ErrorCode::kNotFound;
    if (error_number == EACCES || error_number == EPERM) code = ErrorCode::kPermissionDenied;
    return Error(code,
                 fmt::format("{} {}: {}", what, path, std::system_category().message(error_number)),
                 false);
  };
  // O_NONBLOCK: opening a fifo with no writer would otherwise wait for one forever.
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) return std::unexpected(failed(errno, "opening"));
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) return std::unexpected(failed(errno, "inspecting"));
  if (S_ISDIR(status.st_mode) || S_ISFIFO(status.st_mode) || S_ISSOCK(status.st_mode)) {
    const char* kind = S_ISDIR(status.st_mode)    ? "a directory"
                       : S_ISFIFO(status.st_mode) ? "a fifo"
                                                  : "a socket";
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("{} is {}, not a file", path, kind));
  }
  // Blocking again for what is left (a character device such as a tty).
  if (const int flags = ::fcntl(fd.get(), F_GETFL);
      flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return std::unexpected(failed(errno, "opening"));
  }
  // Grown as read, not sized to the limit up front: a limit of tens of MiB for a file that is
  // usually a few KiB (mountinfo) must not cost the limit on every call.
  std::string content;
  if (S_ISREG(status.st_mode) && status.st_size > 0) {
    content.reserve(std::min(static_cast<std::size_t>(status.st_size), limit) + 1);
  }
  char buffer[16 * 1024];
  while (content.size() <= limit) {
    const std::size_t want = std::min(sizeof buffer, limit + 1 - content.size());
    const ssize_t read = ::read(fd.get(), buffer, want);
    if (read < 0 && errno == EINTR) continue;
    if (read < 0) return std::unexpected(failed(errno, "reading"));
    if (read == 0) break;
    content.append(buffer, static_cast<std::size_t>(read));
  }
  if (content.size() > limit) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: larger than the limit of {} bytes", path, limit));
  }
  return content;
}

}  // namespace modelplane::core
