#include "node-agent/loader/checkpoint_file.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

namespace modelplane::agent {

using core::ErrorCode;
using core::MakeError;

namespace {

core::Status ReadExactly(int fd, std::byte* buffer, std::uint64_t length, std::uint64_t offset,
                         const std::string& path) {
  std::uint64_t done = 0;
  while (done < length) {
    const ssize_t result =
        ::pread(fd, buffer + done, length - done, static_cast<off_t>(offset + done));
    if (result < 0 && errno == EINTR) continue;
    if (result < 0) {
      return MakeError(ErrorCode::kIo,
                       fmt::format("reading {}: {}", path, std::system_category().message(errno)));
    }
    if (result == 0) {
      return MakeError(
          ErrorCode::kDataLoss,
          fmt::format("{} ended at byte {} while reading its header", path, offset + done));
    }
    done += static_cast<std::uint64_t>(result);
  }
  return core::Ok();
}

bool SameFile(const struct stat& before, const struct stat& after) {
  return before.st_size == after.st_size && before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
         before.st_mtim.tv_nsec == after.st_mtim.tv_nsec && before.st_ino == after.st_ino;
}

// Fraction of the file's pages in the page cache, from mincore over a mapping that is never
// touched (so nothing is read in by asking). 256 pages spread over the file are asked about,
// not all: mincore walks the page cache page by page, and asking about all of a 4 GiB
// checkpoint took longer than mapping it (70 ms).
double ResidentFraction(int fd, std::uint64_t size) {
  constexpr std::uint64_t kSamples = 256;
  if (size == 0) return 0;
  void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (mapping == MAP_FAILED) return 0;
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t pages = (size + page - 1) / page;
  const std::uint64_t step = std::max<std::uint64_t>(1, pages / kSamples);
  std::uint64_t asked = 0;
  std::uint64_t resident = 0;
  for (std::uint64_t index = 0; index < pages; index += step) {
    unsigned char bit = 0;
    if (::mincore(static_cast<std::byte*>(mapping) + index * page, page, &bit) != 0) break;
    ++asked;
    resident += bit & 1;
  }
  ::munmap(mapping, size);
  return asked == 0 ? 0 : static_cast<double>(resident) / static_cast<double>(asked);
}

}  // namespace

core::Result<CheckpointFile> CheckpointFile::Open(const std::string& path, IoMode io_mode,
                                                  DeviceKind device,
                                                  std::vector<std::string>& fallbacks) {
  CheckpointFile file;
  file.path_ = path;
  file.fd_ = core::UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file.fd_.valid()) {
    const int error = errno;
    return MakeError(error == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                     fmt::format("opening {}: {}", path, std::system_category().message(error)));
  }
  if (::fstat(file.fd_.get(), &file.info_) != 0) {
    return MakeError(ErrorCode::kIo,
                     fmt::format("stat {}: {}", path, std::system_category().message(errno)));
  }
  if (!S_ISREG(file.info_.st_mode)) {
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("{} is not a regular file", path));
  }
  const std::uint64_t size = file.size();
  // The whole header is validated before the tensors' memory is planned or allocated;
  // the header buffer itself is bounded by the length check against limit and file size.
  std::array<std::byte, core::kSafetensorsLengthPrefixBytes> prefix{};
  if (size < prefix.size()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: {} bytes is too short for a safetensors file", path, size));
  }
  if (auto status = ReadExactly(file.fd_.get(), prefix.data(), prefix.size(), 0, path); !status) {
    return std::unexpected(status.error());
  }
  auto length = core::ParseSafetensorsHeaderLength(prefix, size);
  if (!length) return std::unexpected(length.error().Wrap(path));
  std::vector<std::byte> header(prefix.size() + *length);
  std::memcpy(header.data(), prefix.data(), prefix.size());
  if (auto status =
          ReadExactly(file.fd_.get(), header.data() + prefix.size(), *length, prefix.size(), path);
      !status) {
    return std::unexpected(status.error());
  }
  auto parsed = core::ParseSafetensorsHeader(header, size);
  if (!parsed) return std::unexpected(parsed.error().Wrap(path));
  file.header_ = std::move(*parsed);
  file.header_bytes_ = header.size();
  file.ChooseIoMode(io_mode, device, fallbacks);
  return file;
}

void CheckpointFile::ChooseIoMode(IoMode io_mode, DeviceKind device,
                                  std::vector<std::string>& fallbacks) {
  if (io_mode == IoMode::kBuffered) return;
  if (io_mode == IoMode::kAuto && ResidentFraction(fd_.get(), size()) >= 0.5) {
    // Mostly in the page cache: O_DIRECT would go to the device for bytes already in memory.
    // On the CPU the cached pages themselves become the tensors (a private mapping, as
    // safetensors does), which beats copying them into fresh memory; elsewhere they are
    // read buffered.
    mapped_ = device == DeviceKind::kCpu;
    return;
  }
  direct_fd_ = core::UniqueFd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT));
  if (!direct_fd_.valid()) {
    fallbacks.push_back(fmt::format("{}: O_DIRECT refused ({}), reading through the page cache",
                                    path_, std::system_category().message(errno)));
    return;
  }
  struct stat direct_info {};
  if (::fstat(direct_fd_.get(), &direct_info) != 0 || direct_info.st_ino != info_.st_ino ||
      direct_info.st_dev != info_.st_dev) {
    // Replaced between the two opens: the verify step reports it; read through one fd.
    direct_fd_.Reset();
    return;
  }
  direct_ = true;
}

core::Status CheckpointFile::VerifyUnchanged() const {
  struct stat now {};
  if (::fstat(fd_.get(), &now) != 0) {
    return MakeError(ErrorCode::kIo,
                     fmt::format("stat {}: {}", path_, std::system_category().message(errno)));
  }
  // The open fd is what was read: a rename over the path leaves these bytes consistent,
  // a write in place or a truncation changes the size or the modification time.
  if (!SameFile(info_, now)) {
    return MakeError(
        ErrorCode::kDataLoss,
        fmt::format("{} changed during the load (size {} -> {}, mtime {}.{:09} -> {}.{:09})", path_,
                    info_.st_size, now.st_size, info_.st_mtim.tv_sec, info_.st_mtim.tv_nsec,
                    now.st_mtim.tv_sec, now.st_mtim.tv_nsec));
  }
  return core::Ok();
}

}  // namespace modelplane::agent
