#include "node-agent/store/media_probe.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <system_error>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "core/io/unique_fd.h"

namespace modelplane::agent {
namespace {

constexpr std::size_t kPiece = 8u << 20;
constexpr std::size_t kAlignment = 4096;

struct FreeDeleter {
  void operator()(void* pointer) const { std::free(pointer); }
};

core::Error ProbeError(std::string_view what, const std::filesystem::path& path, int error) {
  return core::Error(core::ErrorCode::kIo, fmt::format("{} {}: {}", what, path.string(),
                                                       std::system_category().message(error)));
}

}  // namespace

core::Result<std::int64_t> MeasureWriteBandwidth(const std::filesystem::path& folder,
                                                 std::uint64_t bytes) {
  if (bytes == 0) return 0;
  const std::filesystem::path path = folder / fmt::format("media-probe-{}.tmp", ::getpid());
  core::UniqueFd fd(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0600));
  if (!fd.valid() && errno == EINVAL) {
    fd.Reset(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  }
  if (!fd.valid()) return std::unexpected(ProbeError("creating", path, errno));
  // Removed whatever happens below; the open descriptor keeps the inode until it closes.
  struct Remover {
    const std::filesystem::path& path;
    ~Remover() { ::unlink(path.c_str()); }
  } remover{path};
  void* raw = nullptr;
  if (::posix_memalign(&raw, kAlignment, kPiece) != 0) {
    return core::MakeError(core::ErrorCode::kResourceExhausted, "no memory for the media probe");
  }
  std::unique_ptr<std::byte, FreeDeleter> buffer(static_cast<std::byte*>(raw));
  // Not zeros: a filesystem that compresses or dedupes would make those free.
  for (std::size_t index = 0; index < kPiece; ++index) {
    buffer.get()[index] = static_cast<std::byte>((index * 2654435761u) >> 24);
  }
  const auto started = std::chrono::steady_clock::now();
  std::uint64_t written = 0;
  while (written < bytes) {
    const std::size_t piece =
        static_cast<std::size_t>(std::min<std::uint64_t>(kPiece, bytes - written));
    const std::size_t aligned = (piece + kAlignment - 1) / kAlignment * kAlignment;
    const ssize_t result = ::pwrite(fd.get(), buffer.get(), aligned, static_cast<off_t>(written));
    if (result < 0) {
      if (errno == EINTR) continue;
      return std::unexpected(ProbeError("writing", path, errno));
    }
    written += static_cast<std::uint64_t>(result);
  }
  if (::fdatasync(fd.get()) != 0) return std::unexpected(ProbeError("syncing", path, errno));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return static_cast<std::int64_t>(static_cast<double>(written) / std::max(seconds, 1e-6));
}

}  // namespace modelplane::agent
