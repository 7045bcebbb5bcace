#include "node-agent/loader/load_stats.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace modelplane::agent {
namespace {

std::string Bytes(std::uint64_t bytes) {
  constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  auto value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < kUnits.size()) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.2f} {}", value, kUnits[unit]);
}

std::string BucketLabel(std::size_t bucket) {
  if (bucket + 1 == kRequestSizeBuckets) {
    return fmt::format(">{}", Bytes(std::uint64_t{4096} << (bucket - 1)));
  }
  return fmt::format("<={}", Bytes(std::uint64_t{4096} << bucket));
}

}  // namespace

void LoadStats::CountRequest(std::uint64_t length) {
  ++requests;
  std::size_t bucket = 0;
  while (bucket + 1 < kRequestSizeBuckets && length > (std::uint64_t{4096} << bucket)) ++bucket;
  ++request_size_histogram[bucket];
  request_size_bytes[bucket] += length;
}

std::string LoadStats::ToJson() const {
  nlohmann::json histogram = nlohmann::json::array();
  for (std::size_t i = 0; i < kRequestSizeBuckets; ++i) {
    if (request_size_histogram[i] == 0) continue;
    histogram.push_back(
        {{"max_bytes", i + 1 == kRequestSizeBuckets ? nlohmann::json(nullptr)
                                                    : nlohmann::json(std::uint64_t{4096} << i)},
         {"requests", request_size_histogram[i]},
         {"bytes", request_size_bytes[i]}});
  }
  nlohmann::json stage_list = nlohmann::json::array();
  for (const auto& [name, at] : stages) stage_list.push_back({{"stage", name}, {"seconds", at}});
  const nlohmann::json json = {
      {"engine", engine},
      {"device", device},
      {"rank", rank},
      {"world_size", world_size},
      {"files", files},
      {"files_direct", files_direct},
      {"files_buffered", files_buffered},
      {"files_gds", files_gds},
      {"files_mapped", files_mapped},
      {"tensors", tensors},
      {"bytes_needed", bytes_needed},
      {"bytes_read", bytes_read},
      {"header_bytes", header_bytes},
      {"read_amplification", ReadAmplification()},
      {"requests", requests},
      {"request_size_histogram", histogram},
      {"request_bytes", request_bytes},
      {"queue_depth", queue_depth},
      {"max_in_flight", max_in_flight},
      {"mean_in_flight", mean_in_flight},
      {"ring_bytes", ring_bytes},
      {"ring_slots", ring_slots},
      {"host_pinned_bytes", host_pinned_bytes},
      {"host_staging_bytes", host_staging_bytes},
      {"host_output_bytes", host_output_bytes},
      {"device_bytes", device_bytes},
      {"seconds", seconds},
      {"bytes_per_second", BytesPerSecond()},
      {"stages", stage_list},
      {"fallbacks", fallbacks},
  };
  return json.dump();
}

std::string LoadStats::ToTable() const {
  std::string out;
  auto row = [&out](std::string_view name, const std::string& value) {
    out += fmt::format("  {:<22} {}\n", name, value);
  };
  row("device", device);
  row("rank", fmt::format("{} of {}", rank, world_size));
  row("engine",
      fmt::format("{} (queue depth {}, request {})", engine, queue_depth, Bytes(request_bytes)));
  row("files", fmt::format("{} ({} O_DIRECT, {} buffered of which {} mapped, {} GDS)", files,
                           files_direct, files_buffered, files_mapped, files_gds));
  row("tensors", fmt::format("{}", tensors));
  row("bytes needed", Bytes(bytes_needed));
  row("bytes read", Bytes(bytes_read));
  row("read amplification", fmt::format("{:.4f}", ReadAmplification()));
  row("time", fmt::format("{:.3f} s", seconds));
  row("throughput", fmt::format("{}/s", Bytes(static_cast<std::uint64_t>(BytesPerSecond()))));
  row("reads in flight", fmt::format("max {}, mean {:.2f}", max_in_flight, mean_in_flight));
  row("ring", fmt::format("{} in {} slots", Bytes(ring_bytes), ring_slots));
  row("host pinned peak", Bytes(host_pinned_bytes));
  row("host staging peak", Bytes(host_staging_bytes));
  row("host output", Bytes(host_output_bytes));
  row("device output", Bytes(device_bytes));
  out += "  request sizes:\n";
  for (std::size_t i = 0; i < kRequestSizeBuckets; ++i) {
    if (request_size_histogram[i] == 0) continue;
    out += fmt::format("    {:<14} {}\n", BucketLabel(i), request_size_histogram[i]);
  }
  out += "  stages (s since start):\n";
  for (const auto& [name, at] : stages) out += fmt::format("    {:<14} {:.4f}\n", name, at);
  for (const std::string& fallback : fallbacks) out += fmt::format("  fallback: {}\n", fallback);
  return out;
}

}  // namespace modelplane::agent
