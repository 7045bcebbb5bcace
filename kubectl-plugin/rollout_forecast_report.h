// `kubectl modelplane plan`'s output: what the rollout simulator predicts for a RolloutPlan
// (rollout_forecast.h). The plan as the cluster gave it (replicas already served, zones, NIC,
// disks, each origin's rates and where they came from), then the prediction: p50/p99
// time-to-ready, the nodes' own lower bound, origin copies per zone, and what limits the rollout.
// Every assumed number is named as assumed.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "kubectl-plugin/rollout_forecast.h"
#include "simulation/rollout_simulation.h"

namespace modelplane::cli {

enum class RolloutLimit {
  kNothingToStage,  // enough nodes hold it Ready already, or none can take it
  kNodeDownload,    // every node about as fast as its own NIC or disk allows
  kOriginSeeders,   // the zones' seeders waiting on the origin
  kFanOut,          // the zones' other nodes waiting on their peers
};

// The last node Ready within this factor of the slowest node's lower bound: the nodes' own
// download rate is what limits; nothing the fleet does can make it faster.
inline constexpr double kNearLowerBound = 1.25;
// The nodes that read the origin (the seeders) Ready this late in the rollout: the origin
// limits; earlier, the fan-out from them does.
inline constexpr double kSeedersLateShare = 0.7;

// The slowest staging node's LowerBoundSeconds; 0 when nothing stages.
[[nodiscard]] double SlowestLowerBound(const RolloutPlan& plan);

// `outcome` is Simulate(plan.scenario); when nothing stages it is not read.
[[nodiscard]] RolloutLimit LimitOf(const RolloutPlan& plan,
                                   const simulation::RolloutOutcome& outcome);

[[nodiscard]] std::string RenderRolloutForecast(const RolloutPlan& plan,
                                                const simulation::RolloutOutcome& outcome);

}  // namespace modelplane::cli
