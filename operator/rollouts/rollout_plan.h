// What the workloads that use a revision ask of the node caches, planned per revision (pure,
// unit-tested without a server):
//
//   - A workload whose template moved to this revision while pods of another still run is
//     rolling to it: the revision is staged (reason rollout) on the nodes those pods run on and
//     the nodes its previous revision is kept on for pods or undo (where old pods ran before
//     an in-place replacement removed them), up to its replicas, before any of its new pods may
//     go; those nodes are the rollout's
//     barrier, met once every one of them that can hold the revision holds it Ready (a node
//     whose staging failed, or whose cache has no room, is left out and named). A Deployment
//     also stages it on maxSurge more nodes chosen by the prestage placement rules, for surge
//     pods that find no room beside the old ones. A paused workload's new pods wait whatever
//     the caches hold (`kubectl rollout pause` holds the canary at the pods it has).
//   - A workload whose template moved away from this revision keeps it pinned (reason
//     rollback) on the nodes its pods run on and those it was kept on for pods or undo, where
//     the revision is held, so `kubectl rollout
//     undo` is served by node-local hits: for as long as the rollout runs, then for the
//     revision's rollback window from when the rollout completed, then no more (the bytes stay
//     cached, evictable).
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "core/api/timestamp.h"
#include "operator/prestage/prestage_choice.h"
#include "operator/rollouts/workload.h"

namespace modelplane::controller {

// Kept when a revision sets no spec.retention.rollbackWindow.
inline constexpr std::chrono::hours kDefaultRollbackWindow{1};

struct WorkloadPod {
  std::string uid;
  std::string revision;  // the ModelRevision name its annotation names ("" for none)
  std::string node;      // bound to, or empty
  bool ready = false;    // the pod's Ready condition
};

struct WorkloadPods {
  Workload workload;
  std::vector<WorkloadPod> pods;
  // From the revision's last status: when the workload finished rolling away from it.
  std::optional<core::api::Timestamp> completed_at;
};

struct RolloutPlanRequest {
  std::string revision;  // name, in the workloads' namespace
  std::int64_t total_bytes = 0;
  std::chrono::seconds rollback_window{kDefaultRollbackWindow};
  core::api::Timestamp now;
  std::vector<WorkloadPods> workloads;    // those naming it now or before
  std::vector<PrestageCandidate> caches;  // what each node holds of it, room
  std::set<std::string> failed_nodes;     // staging it failed there
  // By revision name (this one and those the workloads roll away from): the nodes whose
  // ModelCache spec lists it for pods (in-use) or for undo (rollback). That is where a workload
  // ran before its rollout, which its pods no longer show once an in-place replacement has
  // removed the old ones.
  std::map<std::string, std::set<std::string>> serving_nodes;
};

struct NodeIntent {
  std::string reason;  // rollout | rollback
  bool pinned = false;
  std::optional<core::api::Timestamp> pinned_until;
};

struct RolloutBarrier {
  std::vector<std::string> nodes;  // sorted: where it must be Ready before new pods go
  int ready = 0;
  bool met = false;
  std::string message;  // for the waiting pods and the workload's Event
};

struct RolloutPlan {
  std::map<std::string, NodeIntent> nodes;          // by node
  std::vector<core::api::WorkloadUse> workloads;    // for status, sorted by kind and name
  std::map<std::string, RolloutBarrier> barriers;   // by Workload::Key(), rolling workloads only
  std::optional<core::api::Timestamp> next_change;  // the earliest pin that lapses
};

[[nodiscard]] RolloutPlan PlanRollouts(const RolloutPlanRequest& request);

}  // namespace modelplane::controller
