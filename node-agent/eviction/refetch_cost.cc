#include "node-agent/eviction/refetch_cost.h"

#include <algorithm>

namespace modelplane::agent {

double RefetchBytesPerSecond(const RefetchFacts& facts, const RefetchSettings& settings) {
  const double peer = facts.peer_bytes_per_second.value_or(settings.default_peer_bytes_per_second);
  double origin = facts.origin_bytes_per_second.value_or(settings.default_origin_bytes_per_second);
  if (facts.origin_down) origin *= settings.origin_down_factor;
  double best = origin;
  if (facts.peer_in_zone) best = std::max(best, peer);
  if (facts.peer_elsewhere) best = std::max(best, peer * settings.cross_zone_factor);
  return std::max(best, 1.0);
}

double RefetchSeconds(const RefetchFacts& facts, const RefetchSettings& settings,
                      std::uint64_t bytes) {
  return settings.fixed_seconds +
         static_cast<double>(bytes) / RefetchBytesPerSecond(facts, settings);
}

}  // namespace modelplane::agent
