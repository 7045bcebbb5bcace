// Loads safetensors checkpoints into host memory or GPU memory as fast as the storage allows:
// the last hop from the node's cache (or a shared filesystem) into the serving engine.
//
// How: every file's header is read and fully validated (core/safetensors) before anything is
// allocated; the rank's byte ranges are planned from the sharding rules (shard_plan.h); then
// a ReadEngine (io_uring, or a pread pool where io_uring is refused) keeps `queue_depth`
// reads of `request_bytes` in flight. Files are read with O_DIRECT into aligned memory unless
// the filesystem refuses it (then through the page cache) or, in IoMode::kAuto, most of the
// file is already in the page cache (then a buffered read is a memory copy, faster than the
// device).
//   - CPU: tensors that are one contiguous range of the file are read straight into the
//     result (no staging copy); column splits go through a bounded ring of aligned buffers
//     and are scattered into place.
//   - CUDA: reads land in a ring of host buffers pinned with cudaHostRegister, sized by
//     queue depth x request size (bandwidth x latency), never by model size; each filled
//     buffer is copied with cudaMemcpyAsync on one of several streams while the next reads
//     run. Files that cuFile can register are read by GPUDirect Storage straight into device
//     memory; a file whose registration fails falls back to the pinned ring.
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
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"
#include "core/safetensors/dtype.h"
#include "node-agent/loader/load_stats.h"
#include "node-agent/loader/read_engine.h"
#include "node-agent/loader/shard_plan.h"

namespace modelplane::agent {

// Defaults chosen by measurement (docs/loader.md): on the benchmark machine's virtio disk,
// 16 MiB x 8 in flight was the best of 1-16 MiB x 4-32 and matched fio's 16 MiB x 16; the
// ring it implies (128 MiB) is small next to any model.
inline constexpr std::uint32_t kDefaultRequestBytes = 16u << 20;
inline constexpr std::uint32_t kDefaultQueueDepth = 8;
inline constexpr std::uint32_t kDirectAlignment = 4096;

enum class DeviceKind { kCpu, kCuda, kNone };

struct LoadDevice {
  DeviceKind kind = DeviceKind::kCpu;
  int index = 0;
  friend bool operator==(const LoadDevice&, const LoadDevice&) = default;
};

// "cpu", "none", "cuda" (device 0) or "cuda:N".
[[nodiscard]] core::Result<LoadDevice> ParseLoadDevice(std::string_view text);
[[nodiscard]] std::string LoadDeviceName(const LoadDevice& device);

enum class IoMode { kAuto, kDirect, kBuffered };
[[nodiscard]] core::Result<IoMode> ParseIoMode(std::string_view text);

struct LoadOptions {
  LoadDevice device;
  std::uint32_t rank = 0;
  std::uint32_t world_size = 1;
  std::vector<ShardRule> rules;
  std::uint32_t request_bytes = kDefaultRequestBytes;  // a multiple of 4096
  std::uint32_t queue_depth = kDefaultQueueDepth;
  std::uint64_t ring_bytes = 0;  // 0: queue_depth x request_bytes
  EngineKind engine = EngineKind::kAuto;
  IoMode io_mode = IoMode::kAuto;
  bool gds = true;  // try cuFile for CUDA loads
  std::uint32_t cuda_streams = 2;
  // Column-split chunks closer than this are read in one request and the gap dropped, trading
  // read amplification for fewer requests.
  std::uint64_t coalesce_gap_bytes = 64u << 10;
  // Called on the loading thread after each completed read with the bytes read so far.
  std::function<void(std::uint64_t bytes_read)> on_progress;
};

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

// Expands a checkpoint path: a .safetensors file; a directory (its *.safetensors, sorted); or
// a model.safetensors.index.json (the shards its weight_map names).
[[nodiscard]] core::Result<std::vector<std::string>> ResolveCheckpointFiles(
    const std::string& path);

[[nodiscard]] core::Result<LoadResult> LoadSafetensors(const std::vector<std::string>& files,
                                                       const LoadOptions& options);

}  // namespace modelplane::agent
