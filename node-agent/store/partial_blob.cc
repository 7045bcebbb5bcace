#include "node-agent/store/partial_blob.h"

#include <array>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node-agent/store/durable_file.h"

namespace modelplane::agent {
namespace {

constexpr std::array<char, 8> kProgressMagic = {'M', 'P', 'P', 'R', 'O', 'G', '0', '1'};
constexpr std::size_t kProgressHeaderSize = 32;

struct ProgressHeader {
  std::array<char, 8> magic = kProgressMagic;
  std::uint64_t size = 0;
  std::uint64_t range_size = 0;
  std::uint64_t reserved = 0;
};
static_assert(sizeof(ProgressHeader) == kProgressHeaderSize);

std::size_t CountRanges(std::uint64_t size, std::uint64_t range_size) {
  return static_cast<std::size_t>((size + range_size - 1) / range_size);
}

}  // namespace

PartialBlob::PartialBlob(std::filesystem::path partial_path, std::filesystem::path progress_path,
                         const PartialBlobOptions& options, Reservation reservation)
    : partial_path_(std::move(partial_path)),
      progress_path_(std::move(progress_path)),
      options_(options),
      reservation_(std::move(reservation)),
      done_(CountRanges(options.size, options.range_size)) {}

PartialBlob::~PartialBlob() = default;

core::Result<std::unique_ptr<PartialBlob>> PartialBlob::OpenOrResume(
    const std::filesystem::path& partial_path, const std::filesystem::path& progress_path,
    const PartialBlobOptions& options, Reservation reservation) {
  if (options.range_size == 0 || options.range_size % kDirectIoAlignment != 0) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           fmt::format("range size {} is not a positive multiple of {}",
                                       options.range_size, kDirectIoAlignment));
  }
  std::unique_ptr<PartialBlob> blob(
      new PartialBlob(partial_path, progress_path, options, std::move(reservation)));
  if (auto opened = blob->Open(); !opened) {
    blob->Discard();
    return std::unexpected(opened.error());
  }
  return blob;
}

core::Status PartialBlob::Open() {
  // The progress record decides whether the partial file is worth resuming.
  ProgressHeader wanted;
  wanted.size = options_.size;
  wanted.range_size = options_.range_size;
  std::vector<char> flags(done_.size(), 0);
  bool resume = false;
  progress_fd_.Reset(::open(progress_path_.c_str(), O_RDWR | O_CLOEXEC));
  if (progress_fd_.valid() && ::access(partial_path_.c_str(), F_OK) == 0) {
    ProgressHeader found;
    struct stat info {};
    if (::fstat(progress_fd_.get(), &info) == 0 &&
        static_cast<std::uint64_t>(info.st_size) == kProgressHeaderSize + flags.size() &&
        ReadAllAt(progress_fd_.get(), &found, sizeof(found), 0, progress_path_) &&
        found.magic == kProgressMagic && found.size == wanted.size &&
        found.range_size == wanted.range_size &&
        ReadAllAt(progress_fd_.get(), flags.data(), flags.size(), kProgressHeaderSize,
                  progress_path_)) {
      resume = true;
    }
  }
  if (!resume) {
    progress_fd_.Reset(
        ::open(progress_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!progress_fd_.valid())
      return std::unexpected(ErrnoError(errno, "creating", progress_path_));
    std::fill(flags.begin(), flags.end(), 0);
    std::vector<char> record(kProgressHeaderSize + flags.size(), 0);
    std::memcpy(record.data(), &wanted, sizeof(wanted));
    if (auto written =
            WriteAllAt(progress_fd_.get(), record.data(), record.size(), 0, progress_path_);
        !written) {
      return written;
    }
  }

  const int create_flags = O_RDWR | O_CREAT | O_CLOEXEC | (resume ? 0 : O_TRUNC);
  read_fd_.Reset(::open(partial_path_.c_str(), create_flags, 0600));
  if (!read_fd_.valid()) return std::unexpected(ErrnoError(errno, "creating", partial_path_));
  if (options_.allow_direct_io) {
    write_fd_.Reset(::open(partial_path_.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC));
    direct_io_ = write_fd_.valid();  // EINVAL: the filesystem has no O_DIRECT (overlayfs)
    if (direct_io_) {
      direct_read_fd_.Reset(::open(partial_path_.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
      if (!direct_read_fd_.valid()) {
        return std::unexpected(ErrnoError(errno, "opening for direct reads", partial_path_));
      }
    }
  }
  if (!direct_io_) {
    write_fd_.Reset(::open(partial_path_.c_str(), O_WRONLY | O_CLOEXEC));
    if (!write_fd_.valid()) return std::unexpected(ErrnoError(errno, "opening", partial_path_));
  }
  for (std::size_t index = 0; index < flags.size(); ++index) {
    if (flags[index] != 0) {
      done_[index].store(true);
      ++resumed_ranges_;
    }
  }
  return core::Ok();
}

core::Status PartialBlob::Preallocate() {
  std::lock_guard lock(preallocate_mutex_);
  if (preallocated_.load()) return core::Ok();
  // fallocate(2), not posix_fallocate: where the filesystem cannot preallocate, glibc's
  // fallback writes zeros, which could land on ranges already written.
  if (!options_.preallocate) {
    // Off (a memory filesystem): blocks come as ranges are written.
  } else if (options_.size == 0 ||
             ::fallocate(read_fd_.get(), 0, 0, static_cast<off_t>(options_.size)) == 0) {
    reservation_.MarkOnDisk();
  } else if (errno != EOPNOTSUPP) {
    return std::unexpected(ErrnoError(errno, "preallocating", partial_path_));
  }
  // Not preallocated (off, or no fallocate here): the ledger's reservation stays outside the
  // filesystem's free figure until the blob is published.
  preallocated_.store(true);
  return core::Ok();
}

std::uint64_t PartialBlob::RangeOffset(std::size_t index) const {
  return static_cast<std::uint64_t>(index) * options_.range_size;
}

std::uint64_t PartialBlob::RangeLength(std::size_t index) const {
  const std::uint64_t offset = RangeOffset(index);
  return std::min(options_.range_size, options_.size - offset);
}

bool PartialBlob::IsRangeDone(std::size_t index) const {
  return done_[index].load();
}

core::Status PartialBlob::WriteRange(std::size_t index, std::span<const std::byte> data,
                                     std::size_t buffer_capacity) {
  if (index >= done_.size() || data.size() != RangeLength(index)) {
    return core::MakeError(core::ErrorCode::kInternal,
                           fmt::format("range {} of {} written with {} bytes", index,
                                       partial_path_.string(), data.size()));
  }
  std::size_t length = data.size();
  if (direct_io_) {
    // Only the last range can be short; its padding lands past the end and Finish trims it.
    length = static_cast<std::size_t>(RoundUpToAlignment(length));
    const auto address = reinterpret_cast<std::uintptr_t>(data.data());
    if (length > buffer_capacity || address % kDirectIoAlignment != 0) {
      return core::MakeError(core::ErrorCode::kInternal,
                             "direct write from an unaligned or too small buffer");
    }
  }
  return WriteAllAt(write_fd_.get(), data.data(), length, RangeOffset(index), partial_path_);
}

core::Status PartialBlob::MarkRangeDone(std::size_t index) {
  const char one = 1;
  if (auto written =
          WriteAllAt(progress_fd_.get(), &one, 1, kProgressHeaderSize + index, progress_path_);
      !written) {
    return written;
  }
  done_[index].store(true);
  return core::Ok();
}

core::Status PartialBlob::ReadBack(std::uint64_t offset, std::span<std::byte> out) const {
  if (!direct_io_) return ReadAllAt(read_fd_.get(), out.data(), out.size(), offset, partial_path_);
  // Direct reads need aligned offsets, lengths and memory: read the enclosing aligned span into
  // an aligned bounce buffer (a rare path: only ranges whose buffers were given back).
  const std::uint64_t first = offset / kDirectIoAlignment * kDirectIoAlignment;
  const std::uint64_t span = RoundUpToAlignment(offset + out.size()) - first;
  std::unique_ptr<std::byte, decltype(&std::free)> bounce(
      static_cast<std::byte*>(std::aligned_alloc(kDirectIoAlignment, span)), &std::free);
  if (!bounce)
    return core::MakeError(core::ErrorCode::kResourceExhausted, "no memory to read back");
  std::uint64_t got = 0;
  while (got < span) {
    const ssize_t read = ::pread(direct_read_fd_.get(), bounce.get() + got, span - got,
                                 static_cast<off_t>(first + got));
    if (read < 0) {
      if (errno == EINTR) continue;
      return std::unexpected(ErrnoError(errno, "reading back", partial_path_));
    }
    if (read == 0) break;  // past the end of the file: the padding of the last range
    got += static_cast<std::uint64_t>(read);
  }
  if (got < offset - first + out.size()) {
    return core::MakeError(
        core::ErrorCode::kDataLoss,
        fmt::format("{} ends before {}", partial_path_.string(), offset + out.size()));
  }
  std::memcpy(out.data(), bounce.get() + (offset - first), out.size());
  return core::Ok();
}

core::Status PartialBlob::Finish() {
  if (::ftruncate(read_fd_.get(), static_cast<off_t>(options_.size)) != 0) {
    return std::unexpected(ErrnoError(errno, "trimming", partial_path_));
  }
  if (::fsync(read_fd_.get()) != 0)
    return std::unexpected(ErrnoError(errno, "syncing", partial_path_));
  write_fd_.Reset();
  direct_read_fd_.Reset();
  progress_fd_.Reset();
  ::unlink(progress_path_.c_str());
  return core::Ok();
}

void PartialBlob::Discard() {
  write_fd_.Reset();
  read_fd_.Reset();
  direct_read_fd_.Reset();
  progress_fd_.Reset();
  ::unlink(partial_path_.c_str());
  ::unlink(progress_path_.c_str());
  reservation_.Release();
}

}  // namespace modelplane::agent
