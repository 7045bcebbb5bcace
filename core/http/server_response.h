// What an HTTP handler returns: a status, headers and either a small in-memory body or a
// streamed body of known length that the server reads piecewise (never whole) while writing.
//
// Streamed bodies serve model blobs to peers, so the server honours "Range: bytes=a-b" on them
// (206 / 416) and reads only the requested bytes. A BodySource is used by one connection at a
// time; ReadAt may be called from any io thread but never concurrently for one source.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/status.hpp>

#include "core/error/error.h"

namespace modelplane::core {

// A body of known size that can be read at any offset (a file, a blob in a cache, a generator).
class BodySource {
 public:
  virtual ~BodySource() = default;
  [[nodiscard]] virtual std::uint64_t Size() const = 0;
  // Fills a prefix of `out` with the bytes at `offset`; returns how many (0 only at the end).
  [[nodiscard]] virtual Result<std::size_t> ReadAt(std::uint64_t offset,
                                                   std::span<std::byte> out) = 0;
  // A regular file holding the bytes at the same offsets, or -1. Plain-HTTP connections then
  // send with sendfile(2) instead of ReadAt; the descriptor stays owned by the source.
  [[nodiscard]] virtual int FileDescriptor() const { return -1; }
};

// A regular file read with pread; the descriptor closes with the source.
class FileBodySource final : public BodySource {
 public:
  [[nodiscard]] static Result<std::unique_ptr<FileBodySource>> Open(const std::string& path);
  FileBodySource(const FileBodySource&) = delete;
  FileBodySource& operator=(const FileBodySource&) = delete;
  ~FileBodySource() override;

  [[nodiscard]] std::uint64_t Size() const override { return size_; }
  [[nodiscard]] Result<std::size_t> ReadAt(std::uint64_t offset, std::span<std::byte> out) override;
  [[nodiscard]] int FileDescriptor() const override { return fd_; }

 private:
  FileBodySource(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
  int fd_;
  std::uint64_t size_;
};

// The implicit move assignment only calls noexcept ones (basic_fields' is, with std::allocator);
// clang-tidy 16 looks through basic_fields' into the calls that could throw.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct ServerResponse {
  boost::beast::http::status status = boost::beast::http::status::ok;
  boost::beast::http::fields headers;
  std::string body;                    // used when `stream` is null
  std::unique_ptr<BodySource> stream;  // streamed with Content-Length = Size() (or the range)

  // A text/plain (or given content type) response with an in-memory body.
  [[nodiscard]] static ServerResponse Text(boost::beast::http::status status, std::string body,
                                           std::string_view content_type = "text/plain");
  // A 200 response streamed from `source`; Range requests are answered from it.
  [[nodiscard]] static ServerResponse Stream(
      std::unique_ptr<BodySource> source,
      std::string_view content_type = "application/octet-stream");
};

}  // namespace modelplane::core
