// Room for the revision in the node's cache, and what making that room would cost the node's
// other models.
//
// Filter: a node whose ModelCache reports a capacity fails when the bytes it still lacks (the
// revision's bytes less those it holds through other revisions) exceed capacity - used -
// reserved plus what its agent could evict without touching a protected revision (in use,
// pinned, reserved, the zone's last copy): the agent would refuse the staging
// (InsufficientCapacity), so the pod must not wait there. A node that already holds the
// revision Ready or Staging passes (its bytes are counted there), and so does one whose
// capacity is unknown: unknown is not a reason to refuse.
//
// Score: 10 when the lacking bytes fit below the high watermark (nothing is evicted for them);
// otherwise the agent will evict its coldest unprotected revisions (never used first, then
// least recently used) until they fit: 2..9 by the share of the reclaimable bytes left
// afterwards when every one of those victims is cold, and 1 when one of them was used by a pod
// within the hot window (evicting it costs a refetch that serving will feel), or when even all
// of them would not bring the cache back below its high watermark; 0 where it cannot fit at
// all (the filter refuses it). Abstains (no score) when the
// capacity is unknown.
// Thread safety: immutable; the clock must outlive it.
#pragma once

#include <chrono>

#include "core/clock/clock.h"
#include "scheduler-extender/placement_rule.h"

namespace modelplane::extender {

inline constexpr std::chrono::seconds kDefaultHotWindow = std::chrono::hours(1);

class CacheRoomRule final : public PlacementRule {
 public:
  explicit CacheRoomRule(const core::Clock& clock,
                         std::chrono::seconds hot_window = kDefaultHotWindow)
      : clock_(clock), hot_window_(hot_window) {}

  [[nodiscard]] std::string_view Name() const override { return "cache-room"; }
  [[nodiscard]] RuleVerdict Judge(const NodeContext& context) const override;

 private:
  // The score for a node that must make room for `lacking` bytes and can (the filter passed).
  [[nodiscard]] std::int64_t RoomScore(const NodeCacheInfo& cache, std::int64_t lacking) const;

  const core::Clock& clock_;
  std::chrono::seconds hot_window_;
};

}  // namespace modelplane::extender
