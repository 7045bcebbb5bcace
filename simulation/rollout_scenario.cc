#include "simulation/rollout_scenario.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace modelplane::simulation {

std::vector<NodeModel> UniformFleet(int nodes, int zones, double nic_bytes_per_second,
                                    double write_bytes_per_second) {
  std::vector<NodeModel> fleet;
  fleet.reserve(static_cast<std::size_t>(std::max(0, nodes)));
  for (int index = 0; index < nodes; ++index) {
    fleet.push_back({.name = fmt::format("node-{:05}", index),
                     .zone = fmt::format("zone-{}", index % std::max(1, zones)),
                     .nic_bytes_per_second = nic_bytes_per_second,
                     .write_bytes_per_second = write_bytes_per_second});
  }
  return fleet;
}

std::vector<std::uint64_t> ShardedModel(std::uint64_t total_bytes, std::uint64_t largest_file) {
  std::vector<std::uint64_t> files;
  largest_file = std::max<std::uint64_t>(1, largest_file);
  while (total_bytes > 0) {
    const std::uint64_t size = std::min(total_bytes, largest_file);
    files.push_back(size);
    total_bytes -= size;
  }
  return files;
}

double LowerBoundSeconds(const RolloutScenario& scenario, const NodeModel& node) {
  const double bytes = static_cast<double>(
      std::accumulate(scenario.file_sizes.begin(), scenario.file_sizes.end(), std::uint64_t{0}));
  return bytes / std::min(node.nic_bytes_per_second, node.write_bytes_per_second);
}

}  // namespace modelplane::simulation
