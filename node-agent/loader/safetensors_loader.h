// Loads safetensors checkpoints into host memory or GPU memory as fast as the storage allows:
// the last hop from the node's cache (or a shared filesystem) into the serving engine.
//
// How: every file's header is read and fully validated (checkpoint_file.h) before anything is
// allocated; the rank's tensors are laid out in one arena per file (arena_layout.h) and the
// reads that fill them planned (read_plan.h), both pure; then a ReadEngine (io_uring, or a
// pread pool where io_uring is refused) keeps `queue_depth` reads of `request_bytes` in flight
// (read_pipeline.h). Files are read with O_DIRECT into aligned memory unless the filesystem
// refuses it (then through the page cache) or, in IoMode::kAuto, most of the file is already
// in the page cache (then a buffered read is a memory copy, faster than the device).
//   - CPU: tensors that are one contiguous range of the file are read straight into the
//     result (no staging copy); column splits go through a bounded ring of aligned buffers
//     and are scattered into place.
//   - CUDA: reads land in a ring of host buffers pinned with cudaHostRegister, sized by
//     queue depth x request size (bandwidth x latency), never by model size; each filled
//     buffer is copied with cudaMemcpyAsync on one of several streams while the next reads
//     run (staging_ring.h). Files that cuFile can register are read by GPUDirect Storage
//     straight into device memory (gds_reader.h); a file whose registration fails falls back
//     to the pinned ring.
//   - None: bytes are read through the ring and dropped: the storage-to-host rate alone.
// The CUDA runtime and cuFile are opened with dlopen (cuda_runtime.h, cufile.h).
//
// A file whose size or modification time changes between the header read and the end of the
// load, or that ends early, fails the load with kDataLoss.
//
// Thread safety: LoadSafetensors may run on several threads at once (nothing is shared); a
// LoadResult is immutable and owns its memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error/error.h"
#include "core/safetensors/dtype.h"
#include "node-agent/loader/checkpoint_paths.h"
#include "node-agent/loader/load_options.h"
#include "node-agent/loader/load_stats.h"

namespace modelplane::agent {

struct LoadedTensor {
  std::string name;
  core::Dtype dtype = core::Dtype::kU8;
  std::vector<std::uint64_t> shape;  // the rank's shape
  std::byte* data = nullptr;         // host or device address, per the result's device
  std::uint64_t bytes = 0;
  std::uint32_t file_index = 0;
};

class LoadResult {
 public:
  LoadResult(LoadResult&&) noexcept;
  LoadResult& operator=(LoadResult&&) noexcept;
  ~LoadResult();

  [[nodiscard]] const std::vector<LoadedTensor>& tensors() const { return tensors_; }
  [[nodiscard]] const LoadStats& stats() const { return stats_; }
  [[nodiscard]] const LoadDevice& device() const { return device_; }
  // Copies a tensor to host memory (a plain copy on CPU, cudaMemcpy on CUDA): for checks.
  [[nodiscard]] core::Result<std::vector<std::byte>> CopyToHost(const LoadedTensor& tensor) const;

 private:
  friend class LoadRun;
  struct Owned;
  LoadResult();
  std::vector<LoadedTensor> tensors_;
  LoadStats stats_;
  LoadDevice device_;
  std::unique_ptr<Owned> owned_;
};

[[nodiscard]] core::Result<LoadResult> LoadSafetensors(const std::vector<std::string>& files,
                                                       const LoadOptions& options);

}  // namespace modelplane::agent
