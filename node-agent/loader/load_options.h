// What a caller asks of one load: the device, the rank and its sharding rules, and the I/O
// shape (request size, queue depth, ring, engine, O_DIRECT or not, GDS). Kept apart from the
// loader so that every stage of a load (files, plan, ring, pipeline) can take the options
// without depending on the loader that runs them.
//
// Thread safety: values; the parse functions are reentrant.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"
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
  std::uint32_t request_bytes = kDefaultRequestBytes;  // a multiple of 4096, at least 8 KiB
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

// The limits a load checks before it opens anything: rank inside the world, request size a
// multiple of 4096 up to 1 GiB, queue depth in [1, 1024], CUDA streams in [1, 64].
[[nodiscard]] core::Status CheckLoadOptions(const LoadOptions& options);

}  // namespace modelplane::agent
