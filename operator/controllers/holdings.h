// What the operator tells each node about the revision digests it holds (ModelCache
// spec.holdings), so that the agent needs no other node's status and no ModelRevision it does
// not stage: whether other nodes hold each digest Ready, in its zone or elsewhere (eviction's
// refetch cost and the zone's last copy), and whether it is revoked (withhold from peers and
// purge). Also how often the agent may write progress (spec.progressIntervalSeconds), from the
// fleet's size.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/model_cache.h"

namespace modelplane::controller {

struct ReadyCopy {
  std::string node;
  std::string zone;
};

// What the fleet knows about one digest.
struct DigestFacts {
  std::vector<ReadyCopy> ready;  // every node whose status lists it Ready
  bool revoked = false;          // a revision with it is revoked and none that is not names it
  bool force_purge = false;
};

// One entry per digest `held` lists, sorted by digest.
[[nodiscard]] std::vector<core::api::Holding> PlanHoldings(
    std::string_view node, std::string_view zone, const std::vector<std::string>& held,
    const std::function<DigestFacts(const std::string& digest)>& facts);

// The fleet's status writes while only bytes move stay near `writes_per_second` whatever its
// size: each node writes every nodes / writes_per_second seconds, rounded up to a power of two
// (the interval changes rarely as the fleet grows and shrinks), at least 1 s, at most 512 s.
inline constexpr double kFleetProgressWritesPerSecond = 50;
[[nodiscard]] std::int32_t ProgressIntervalSeconds(
    std::size_t nodes, double writes_per_second = kFleetProgressWritesPerSecond);

// Whether a node holding a digest must hear that `changed_zone`'s Ready copies of it changed,
// given how many there are now: its peerInZone flips only while its zone has at most two (one
// of them its own), its peerElsewhere only while the changed zone has at most one.
[[nodiscard]] bool HoldingMayChange(std::string_view holder_zone, std::string_view changed_zone,
                                    std::size_t ready_in_changed_zone);

}  // namespace modelplane::controller
