// `kubectl modelplane plan REVISION --replicas N`: the rollout simulator's world
// (simulation/rollout_scenario.h) built from what the cluster reports, so that Simulate can
// predict the rollout's time-to-ready. One NodeModel per ModelCache that matters (the nodes that
// hold the revision Ready, and the nodes chosen to stage it), one OriginModel per spec.sources
// entry with what its SourceBudget has learned of it. The cluster does not report NIC speeds, and
// has not measured a source the fleet never read: flags supply those, and the plan records where
// every rate came from so that the report can say which numbers are assumed.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error/error.h"
#include "kubectl-plugin/revision_copies.h"
#include "simulation/rollout_scenario.h"

namespace modelplane::cli {

inline constexpr double kDefaultNicGigabits = 25;
// Simulated time after which a forecast gives up: far beyond any rollout worth planning, short
// enough that a hopeless one (a trickling origin) answers in seconds.
inline constexpr double kForecastHorizonSeconds = 4 * 3600;

struct ForecastFlags {
  std::int32_t replicas = 0;  // nodes that should hold the revision Ready
  double nic_bytes_per_second = kDefaultNicGigabits * simulation::kGigabit;
  // Override what the SourceBudgets measured, for every source of the revision.
  std::optional<double> origin_bytes_per_second;
  std::optional<double> stream_bytes_per_second;
};

// Where one of an origin's rates came from.
enum class RateBasis {
  kMeasured,  // its SourceBudget's status (what the fleet measured)
  kFlag,      // --origin-gbps / --stream-mbps
  kAssumed,   // neither: the simulator's default for a source nobody measured
};

struct OriginBasis {
  std::string source_name;  // spec.sources[].name
  RateBasis bytes_per_second = RateBasis::kAssumed;
  RateBasis stream_bytes_per_second = RateBasis::kAssumed;
  bool capped_by_capacity = false;  // spec capacity.maxBytesPerSecond lowered bytes_per_second
};

struct RolloutPlan {
  std::string revision;  // namespace/name
  simulation::RolloutScenario scenario;
  std::vector<OriginBasis> origins;  // one per scenario.origins entry
  std::vector<std::string> holders;  // nodes that hold it Ready, sorted; they count as replicas
  std::vector<std::string> staging;  // nodes chosen to stage it, in name order
  std::int32_t replicas = 0;         // asked for
  std::int32_t unplaceable = 0;      // replicas still needed that no node can take
  std::int32_t measured_disks = 0;   // staging nodes whose media bandwidth is known
  // Objects that did not parse or could not be listed, as "what: why"; left out of the plan.
  std::vector<std::string> problems;
};

// `revision` is the ModelRevision and `caches`/`budgets` every ModelCache and SourceBudget, as
// the API server returned them. Nodes to stage are the first (by name) that report status and do
// not hold the revision Ready, as many as replicas minus holders. Fails when the revision cannot
// be read or planned (revoked, no files, an unknown source type) or the caches cannot be listed;
// unlisted budgets only make the rates assumed.
[[nodiscard]] core::Result<RolloutPlan> PlanRollout(const nlohmann::json& revision,
                                                    const ObjectListing& caches,
                                                    const ObjectListing& budgets,
                                                    const ForecastFlags& flags);

}  // namespace modelplane::cli
