// One blob being staged: a preallocated temporary file written range by range (in any order, by
// many threads), and a progress record of which ranges are complete, so a restarted agent
// resumes where the last one stopped instead of downloading again.
//
// The progress record is a small file: a header (magic, size, range size) and one byte per
// range, set to 1 after the range's bytes were written. Flipping one byte is atomic, so after a
// crash the record never claims a range whose write had not finished. Nothing in here is
// trusted: the caller hashes the whole file in order (resumed ranges are read back from disk)
// and the store publishes it only if the digest matches.
//
// Writes use O_DIRECT where the filesystem allows it (overlayfs does not), so staging gigabytes
// does not evict the page cache that serving engines rely on. Buffers handed to WriteRange must
// then be 4096-byte aligned with room for the length rounded up to 4096.
//
// Thread safety: Preallocate, WriteRange, MarkRangeDone, ReadBack and IsRangeDone may run
// concurrently (all but the first for different ranges). Finish and Discard run alone, after all
// writers stopped.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "core/digest/sha256.h"
#include "core/error/error.h"
#include "core/io/unique_fd.h"
#include "node-agent/store/space_ledger.h"

namespace modelplane::agent {

inline constexpr std::size_t kDirectIoAlignment = 4096;

[[nodiscard]] constexpr std::uint64_t RoundUpToAlignment(std::uint64_t value) {
  return (value + kDirectIoAlignment - 1) / kDirectIoAlignment * kDirectIoAlignment;
}

struct PartialBlobOptions {
  core::Sha256Bytes digest{};
  std::uint64_t size = 0;
  std::uint64_t range_size = 0;  // a multiple of kDirectIoAlignment
  bool allow_direct_io = true;
  // Whether Preallocate allocates the file's blocks (fallocate). The store turns it off on
  // memory filesystems (store_files.h, IsMemoryFilesystem).
  bool preallocate = true;
};

class PartialBlob {
 public:
  // Resumes a matching partial (same size and range size) or starts a new one. `reservation`
  // covers the size and is held until Finish or Discard.
  [[nodiscard]] static core::Result<std::unique_ptr<PartialBlob>> OpenOrResume(
      const std::filesystem::path& partial_path, const std::filesystem::path& progress_path,
      const PartialBlobOptions& options, Reservation reservation);

  PartialBlob(const PartialBlob&) = delete;
  PartialBlob& operator=(const PartialBlob&) = delete;
  ~PartialBlob();

  [[nodiscard]] const core::Sha256Bytes& digest() const { return options_.digest; }
  [[nodiscard]] std::uint64_t size() const { return options_.size; }
  [[nodiscard]] std::uint64_t range_size() const { return options_.range_size; }
  [[nodiscard]] std::size_t range_count() const { return done_.size(); }
  [[nodiscard]] std::uint64_t RangeOffset(std::size_t index) const;
  [[nodiscard]] std::uint64_t RangeLength(std::size_t index) const;
  [[nodiscard]] bool direct_io() const { return direct_io_; }
  [[nodiscard]] const std::filesystem::path& path() const { return partial_path_; }

  // Allocates `size` bytes on the filesystem (once; later calls return at once), so a full
  // disk shows before bytes are fetched rather than halfway. Writers call it before their first
  // write; it is not done on open because on tmpfs it costs as much as writing, and a fetch
  // opens all its files at once but writes few at a time. Where the filesystem has no
  // fallocate, or the options turn it off, the bytes are only reserved in the ledger and
  // a full disk shows as kResourceExhausted from a write.
  [[nodiscard]] core::Status Preallocate();

  [[nodiscard]] bool IsRangeDone(std::size_t index) const;
  // Ranges found complete when this partial was opened (resumed work).
  [[nodiscard]] std::size_t resumed_ranges() const { return resumed_ranges_; }

  // Writes range `index`; `data` is exactly RangeLength(index) bytes inside a buffer of
  // `buffer_capacity` bytes (see the alignment rule above).
  [[nodiscard]] core::Status WriteRange(std::size_t index, std::span<const std::byte> data,
                                        std::size_t buffer_capacity);
  [[nodiscard]] core::Status MarkRangeDone(std::size_t index);
  // Reads written bytes back (page cache or disk), to hash ranges whose buffers are gone.
  [[nodiscard]] core::Status ReadBack(std::uint64_t offset, std::span<std::byte> out) const;

  // Trims any alignment padding and fsyncs the data. Afterwards the file at path() holds exactly
  // size() bytes and may be renamed; the progress record is removed.
  [[nodiscard]] core::Status Finish();
  // Removes both files and releases the reservation.
  void Discard();
  // Hands over the reservation (when the store publishes the file under its digest).
  [[nodiscard]] Reservation TakeReservation() { return std::move(reservation_); }

 private:
  PartialBlob(std::filesystem::path partial_path, std::filesystem::path progress_path,
              const PartialBlobOptions& options, Reservation reservation);
  [[nodiscard]] core::Status Open();

  std::filesystem::path partial_path_;
  std::filesystem::path progress_path_;
  PartialBlobOptions options_;
  Reservation reservation_;
  core::UniqueFd write_fd_;  // O_DIRECT when direct_io_
  core::UniqueFd read_fd_;   // buffered
  // Reads back with O_DIRECT when writes use it: a buffered read (and its readahead) racing a
  // direct write of the same pages can leave stale pages in the page cache.
  core::UniqueFd direct_read_fd_;
  core::UniqueFd progress_fd_;
  bool direct_io_ = false;
  std::vector<std::atomic<bool>> done_;
  std::mutex preallocate_mutex_;
  std::atomic<bool> preallocated_{false};
  std::size_t resumed_ranges_ = 0;
};

}  // namespace modelplane::agent
