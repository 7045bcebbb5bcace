#include "operator/rollouts/rollout_readiness.h"

#include <algorithm>
#include <map>

namespace modelplane::controller {

std::optional<double> PredictStagingSeconds(const std::vector<BarrierNodeBytes>& nodes,
                                            std::optional<double> bytes_per_second) {
  std::map<std::string, std::int64_t> zone_copies;  // the most a node of the zone misses
  for (const BarrierNodeBytes& node : nodes) {
    std::int64_t& most = zone_copies[node.zone];
    most = std::max(most, node.missing_bytes);
  }
  double origin_bytes = 0;
  for (const auto& [zone, bytes] : zone_copies) origin_bytes += static_cast<double>(bytes);
  if (origin_bytes <= 0) return 0.0;
  if (!bytes_per_second || *bytes_per_second <= 0) return std::nullopt;
  return origin_bytes / *bytes_per_second;
}

}  // namespace modelplane::controller
