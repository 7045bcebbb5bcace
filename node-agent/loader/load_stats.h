// What one load did, for the CLI, the C ABI (as JSON) and the tests: bytes needed and read,
// request sizes, queue depth, memory high-water marks, stage times and the fallbacks taken.
//
// Thread safety: a value; fill it from one thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace modelplane::agent {

// Request sizes by power of two: bucket i counts requests of at most 4 KiB << i bytes; the
// last bucket takes everything larger.
inline constexpr std::size_t kRequestSizeBuckets = 16;

struct LoadStats {
  std::string engine;  // "io_uring" or "pread-pool"
  std::string device;  // "cpu", "cuda:0", "none"
  std::uint32_t rank = 0;
  std::uint32_t world_size = 1;
  std::uint32_t files = 0;
  std::uint32_t files_direct = 0;    // read with O_DIRECT
  std::uint32_t files_buffered = 0;  // read through the page cache
  std::uint32_t files_gds = 0;       // read with cuFile into device memory
  std::uint32_t files_mapped = 0;    // cached: contiguous tensors are views of a file mapping
  std::uint64_t tensors = 0;

  std::uint64_t bytes_needed = 0;  // bytes of the rank's tensors
  std::uint64_t bytes_read = 0;    // bytes the storage delivered (alignment and gaps included)
  std::uint64_t header_bytes = 0;  // length prefixes and JSON headers
  std::uint64_t requests = 0;
  std::array<std::uint64_t, kRequestSizeBuckets> request_size_histogram{};
  std::array<std::uint64_t, kRequestSizeBuckets> request_size_bytes{};  // bytes asked, by bucket
  std::uint32_t request_bytes = 0;
  std::uint32_t queue_depth = 0;    // configured limit
  std::uint32_t max_in_flight = 0;  // highest number of reads outstanding
  double mean_in_flight = 0;        // reads outstanding, averaged over submissions

  std::uint64_t ring_bytes = 0;  // staging ring (0 when every read went straight to its tensor)
  std::uint32_t ring_slots = 0;
  std::uint64_t host_pinned_bytes = 0;   // high-water: ring registered with cudaHostRegister
  std::uint64_t host_staging_bytes = 0;  // high-water: ring + headers (not pinned)
  std::uint64_t host_output_bytes = 0;   // tensors in host memory (the result itself)
  std::uint64_t device_bytes = 0;        // tensors in device memory

  double seconds = 0;
  // Stage name and seconds since the load began, in order.
  std::vector<std::pair<std::string, double>> stages;
  // What fell back and why ("io_uring unavailable: ...", "x.safetensors: O_DIRECT refused").
  std::vector<std::string> fallbacks;

  [[nodiscard]] double ReadAmplification() const {
    return bytes_needed == 0 ? 1.0
                             : static_cast<double>(bytes_read) / static_cast<double>(bytes_needed);
  }
  [[nodiscard]] double BytesPerSecond() const {
    return seconds > 0 ? static_cast<double>(bytes_needed) / seconds : 0;
  }
  void CountRequest(std::uint64_t length);

  [[nodiscard]] std::string ToJson() const;
  // A human table for terminals.
  [[nodiscard]] std::string ToTable() const;
};

}  // namespace modelplane::agent
