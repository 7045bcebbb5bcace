// Prefer the nodes that already hold the revision's bytes (room is cache_room_rule.h's).
//
// Score: 10 when the revision is Ready on the node; 1 + 8 * bytesDone / bytesTotal (1..9) while
// it is Staging or Pending (queued: no bytes yet); otherwise 1 + 8 * held / total (1..9) when
// the node holds some of its files through other revisions (stores are content-addressed, so
// those bytes are never fetched again), and 0 when it holds none or has no ModelCache.
// Filter: none.
// Thread safety: immutable.
#pragma once

#include "scheduler-extender/placement_rule.h"

namespace modelplane::extender {

class CacheLocalityRule final : public PlacementRule {
 public:
  [[nodiscard]] std::string_view Name() const override { return "cache-locality"; }
  [[nodiscard]] RuleVerdict Judge(const NodeContext& context) const override;
};

}  // namespace modelplane::extender
