#include "core/http/server_response.h"

#include <cerrno>
#include <cstring>
#include <system_error>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace modelplane::core {

Result<std::unique_ptr<FileBodySource>> FileBodySource::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    return MakeError(error == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                     fmt::format("open {}: {}", path, std::system_category().message(error)));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("{} is not a regular file", path));
  }
  // The server reads front to back; tell the kernel so read-ahead grows.
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::unique_ptr<FileBodySource>(
      new FileBodySource(fd, static_cast<std::uint64_t>(info.st_size)));
}

FileBodySource::~FileBodySource() {
  ::close(fd_);
}

Result<std::size_t> FileBodySource::ReadAt(std::uint64_t offset, std::span<std::byte> out) {
  for (;;) {
    const ssize_t count = ::pread(fd_, out.data(), out.size(), static_cast<off_t>(offset));
    if (count >= 0) return static_cast<std::size_t>(count);
    if (errno == EINTR) continue;
    return MakeError(ErrorCode::kIo,
                     fmt::format("pread at {}: {}", offset, std::system_category().message(errno)));
  }
}

ServerResponse ServerResponse::Text(boost::beast::http::status status, std::string body,
                                    std::string_view content_type) {
  ServerResponse response;
  response.status = status;
  response.headers.set(boost::beast::http::field::content_type,
                       boost::beast::string_view(content_type.data(), content_type.size()));
  response.body = std::move(body);
  return response;
}

ServerResponse ServerResponse::Stream(std::unique_ptr<BodySource> source,
                                      std::string_view content_type) {
  ServerResponse response;
  response.headers.set(boost::beast::http::field::content_type,
                       boost::beast::string_view(content_type.data(), content_type.size()));
  response.stream = std::move(source);
  return response;
}

}  // namespace modelplane::core
