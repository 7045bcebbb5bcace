// How long a rollout's prestage should take by the admission budget of the revision's source:
// the prediction the readiness-slope alert (ModelplaneRolloutReadinessLag) holds a rollout's
// ready replicas against. Pure.
//
// The model follows the fan-out admission enforces (operator/admission/fleet_plan.h): per zone
// one seeder reads the origin and the zone's other nodes read from it and each other, so each
// zone that lacks the revision costs the origin one copy: the most any of its barrier nodes
// still misses. The zones' seeders share the source's budget. Peer copies overlap the seeder's
// and are not counted; nor is the time pods take to start once the barrier is met (the alert's
// ramp allows for that).
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace modelplane::controller {

struct BarrierNodeBytes {
  std::string zone;                // topology.kubernetes.io/zone; "" for nodes without it
  std::int64_t missing_bytes = 0;  // the revision's bytes less what the node holds or staged
};

// Seconds until the revision is Ready on every barrier node at `bytes_per_second` (the
// budget's rate, admission/source_budget.h BudgetBytesPerSecond): 0 when no node misses
// anything, empty without a positive rate.
[[nodiscard]] std::optional<double> PredictStagingSeconds(
    const std::vector<BarrierNodeBytes>& nodes, std::optional<double> bytes_per_second);

}  // namespace modelplane::controller
