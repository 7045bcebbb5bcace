#include "operator/controllers/holdings.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace modelplane::controller {

std::vector<core::api::Holding> PlanHoldings(
    std::string_view node, std::string_view zone, const std::vector<std::string>& held,
    const std::function<DigestFacts(const std::string& digest)>& facts) {
  const std::set<std::string> digests(held.begin(), held.end());
  std::vector<core::api::Holding> holdings;
  holdings.reserve(digests.size());
  for (const std::string& digest : digests) {
    const DigestFacts known = facts(digest);
    core::api::Holding holding{
        .digest = digest, .revoked = known.revoked, .force_purge = known.force_purge};
    for (const ReadyCopy& copy : known.ready) {
      if (copy.node == node) continue;
      (copy.zone == zone ? holding.peer_in_zone : holding.peer_elsewhere) = true;
    }
    holdings.push_back(std::move(holding));
  }
  return holdings;
}

std::int32_t ProgressIntervalSeconds(std::size_t nodes, double writes_per_second) {
  constexpr std::int32_t kLongest = 512;
  if (writes_per_second <= 0) return kLongest;
  const double wanted = static_cast<double>(nodes) / writes_per_second;
  std::int32_t interval = 1;
  while (interval < kLongest && static_cast<double>(interval) < wanted) interval *= 2;
  return interval;
}

bool HoldingMayChange(std::string_view holder_zone, std::string_view changed_zone,
                      std::size_t ready_in_changed_zone) {
  return holder_zone == changed_zone ? ready_in_changed_zone <= 2 : ready_in_changed_zone <= 1;
}

}  // namespace modelplane::controller
