// One safetensors file of a load, open for the whole load: its validated header, the fds its
// bytes are read through, and how they are read (O_DIRECT, the page cache, or a mapping of
// cached pages). Opening reads the length prefix and the JSON header and validates them fully
// (core/safetensors: limits, dtypes, shapes, ranges tiling the data section to the file size)
// before the load plans or allocates anything for the tensors; a truncated file fails here.
//
// How it is read, in IoMode::kAuto: a file mostly in the page cache (mincore on an untouched
// mapping) is not read with O_DIRECT, which would go to the device for bytes already in
// memory; on the CPU its contiguous tensors become views of a private mapping instead.
// Otherwise O_DIRECT, unless the filesystem refuses it at open (then buffered, a fallback).
//
// VerifyUnchanged compares the file's fstat (size, mtime, inode) with the one taken at open:
// a file rewritten or truncated during the load is kDataLoss.
//
// Thread safety: move-only; the accessors may be called from several threads, RefuseDirect
// only from the thread that submits reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "core/error/error.h"
#include "core/io/unique_fd.h"
#include "core/safetensors/safetensors_header.h"
#include "node-agent/loader/load_options.h"

namespace modelplane::agent {

class CheckpointFile {
 public:
  // Fallbacks taken (O_DIRECT refused at open) are appended to `fallbacks`.
  [[nodiscard]] static core::Result<CheckpointFile> Open(const std::string& path, IoMode io_mode,
                                                         DeviceKind device,
                                                         std::vector<std::string>& fallbacks);
  CheckpointFile(CheckpointFile&&) noexcept = default;
  CheckpointFile& operator=(CheckpointFile&&) noexcept = default;
  CheckpointFile(const CheckpointFile&) = delete;
  CheckpointFile& operator=(const CheckpointFile&) = delete;
  ~CheckpointFile() = default;

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const core::SafetensorsHeader& header() const { return header_; }
  // The length prefix and the JSON header: what opening read.
  [[nodiscard]] std::uint64_t header_bytes() const { return header_bytes_; }
  [[nodiscard]] std::uint64_t size() const { return static_cast<std::uint64_t>(info_.st_size); }
  [[nodiscard]] int fd() const { return fd_.get(); }
  [[nodiscard]] int direct_fd() const { return direct_fd_.get(); }
  // Read with O_DIRECT (through direct_fd, aligned to kDirectAlignment).
  [[nodiscard]] bool direct() const { return direct_; }
  // In the page cache, on the CPU: contiguous tensors are views of a mapping of the file.
  [[nodiscard]] bool mapped() const { return mapped_; }
  [[nodiscard]] int ReadFd() const { return direct_ ? direct_fd_.get() : fd_.get(); }
  [[nodiscard]] std::uint64_t Alignment() const { return direct_ ? kDirectAlignment : 1; }

  // The filesystem took O_DIRECT at open but refuses the reads: read through the page cache.
  void RefuseDirect() { direct_ = false; }

  [[nodiscard]] core::Status VerifyUnchanged() const;

 private:
  CheckpointFile() = default;
  void ChooseIoMode(IoMode io_mode, DeviceKind device, std::vector<std::string>& fallbacks);

  std::string path_;
  core::UniqueFd fd_;
  core::UniqueFd direct_fd_;
  bool direct_ = false;
  bool mapped_ = false;
  struct stat info_ {};
  core::SafetensorsHeader header_;
  std::uint64_t header_bytes_ = 0;
};

}  // namespace modelplane::agent
