// A rollout of one revision over a fleet, simulated on the product's own policy code: the
// operator's fleet plan (seeders per zone, operator/admission/fleet_plan.h), its learned source
// budgets and grants (source_budget.h, grant_allocator.h), its peer choice (operator/controllers/
// peer_choice.h), the agent's admission limiter (node-agent/fetch/source_admission.h, on a
// ManualClock) and the fetch engine's source order (node-agent/fetch/source_order.h). What is
// modelled is the world those decisions act on: bytes move as fluid flows over NICs, disks and
// origin caps (flow_sharing.h); the API server is a perfect store whose reads lag only as the
// product's status pacing makes them (progress every progressIntervalSeconds, state changes at
// once).
//
// Simulated time advances in steps: at most a source poll (250 ms) apart, shorter when a file
// is about to complete, never shorter than a two-thousandth of the node's lower bound (so a
// run costs about the same number of steps whatever the model's size).
//
// Modelling choices (docs/scale.md discusses them):
// - a node asks a peer for a file only once the peer verified it a source poll ago (the engine
//   learns it by asking, and polls that often); a staging peer serves whole verified files only;
// - origins: an aggregate byte cap, a per-stream cap, a fixed time to first byte, and 503s for
//   the share of requests above a fleet-wide in-flight threshold;
// - nothing fails: no dead peer, no bad byte, no eviction.
// Thread safety: Simulate is a pure function of its scenario (it runs on one thread).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "simulation/rollout_scenario.h"

namespace modelplane::simulation {

struct NodeOutcome {
  std::string name;
  std::string zone;
  double queued_at = 0;
  double ready_at = -1;  // -1: not Ready when the run ended
  double origin_bytes = 0;
  double peer_bytes = 0;
};

struct PolicyCost {  // CPU seconds this process spent in the product's policy code
  double fleet_plan = 0;
  double peer_choice = 0;
  double grants_and_budgets = 0;
  double slowest_pass = 0;  // one operator pass, all of the above
};

struct RolloutOutcome {
  std::vector<NodeOutcome> nodes;  // those that stage, in scenario order
  bool complete = false;           // every staging node Ready before the time limit
  double finished_at = 0;          // the last staging node Ready (or the limit)
  double model_bytes = 0;
  std::map<std::string, double> origin_bytes_by_zone;
  double peak_peer_upload_bytes_per_second = 0;  // the busiest node serving peers
  int peak_peer_clients = 0;                     // most streams one node served at once
  int operator_passes = 0;
  int peer_list_writes = 0;  // node entries whose peer list changed in a pass
  int status_writes = 0;
  std::int64_t steps = 0;
  PolicyCost policy;
  double wall_seconds = 0;
};

[[nodiscard]] RolloutOutcome Simulate(const RolloutScenario& scenario);

// Time from queued to Ready at quantile q (0..1) over the nodes that became Ready; -1 if none.
[[nodiscard]] double StagingQuantile(const RolloutOutcome& outcome, double q);
// The origin's bytes in copies of the model, per zone that staged (mean over zones).
[[nodiscard]] double OriginCopiesPerZone(const RolloutOutcome& outcome);

}  // namespace modelplane::simulation
