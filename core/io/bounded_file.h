// ReadBoundedFile: the whole content of a small file (a config, a certificate, a key, a JSON
// record) that must never make the caller read without bound.
//
// It reads at most one byte past the limit, so a file that is too big (or endless, as
// /dev/zero, or sized 0 by stat as procfs files are) costs limit + 1 bytes and a clear error,
// never memory in proportion to what a hostile or mistaken path holds. A missing file is
// kNotFound (callers that treat absence as "nothing yet" check for it), too big is
// kInvalidArgument, anything else kIo or kPermissionDenied, each naming the path.
//
// Thread safety: a free function; safe from any thread.
#pragma once

#include <cerrno>
#include <cstddef>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <fmt/format.h>
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
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return std::unexpected(failed(errno, "opening"));
  std::string content(limit + 1, '\0');
  std::size_t filled = 0;
  while (filled < content.size()) {
    const ssize_t read = ::read(fd.get(), content.data() + filled, content.size() - filled);
    if (read < 0 && errno == EINTR) continue;
    if (read < 0) return std::unexpected(failed(errno, "reading"));
    if (read == 0) break;
    filled += static_cast<std::size_t>(read);
  }
  if (filled > limit) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: larger than the limit of {} bytes", path, limit));
  }
  content.resize(filled);
  return content;
}

}  // namespace modelplane::core
