// What it would cost to get a revision's bytes back after evicting them, in seconds: the cost
// half of eviction's value per byte (retention_policy.h).
//
// A revision a peer in this node's zone holds Ready comes back at peer speed; one only peers in
// other zones hold, at a fraction of it (cross-zone links are slower and billed); an origin-only
// one at what its sources measured (SourceThroughput), or a conservative default before any
// fetch measured them. An origin that looks down makes the revision far more expensive, and
// when no peer in the zone holds it, it is the zone's last copy and not evicted at all
// (protection.h). Every refetch also pays a fixed start-up cost (listing, connections, the
// scheduling gate), which favours keeping small revisions, as GreedyDual-Size does.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

namespace modelplane::agent {

struct RefetchSettings {
  double default_peer_bytes_per_second = 1024.0 * 1024 * 1024;  // before a peer fetch measured
  double default_origin_bytes_per_second = 100.0 * 1024 * 1024;
  double cross_zone_factor = 0.5;  // of peer throughput
  double origin_down_factor = 0.01;
  double fixed_seconds = 5;
};

struct RefetchFacts {
  bool peer_in_zone = false;                      // a peer in this node's zone holds it Ready
  bool peer_elsewhere = false;                    // a peer in another zone does
  std::optional<double> peer_bytes_per_second;    // measured, peers of this node
  std::optional<double> origin_bytes_per_second;  // measured, the best of its sources
  bool origin_down = false;
};

// The rate the revision's bytes would come back at.
[[nodiscard]] double RefetchBytesPerSecond(const RefetchFacts& facts,
                                           const RefetchSettings& settings);

// Seconds to fetch `bytes` of it again.
[[nodiscard]] double RefetchSeconds(const RefetchFacts& facts, const RefetchSettings& settings,
                                    std::uint64_t bytes);

}  // namespace modelplane::agent
