// Which gated pods of one revision may go, where, and which nodes must stage the revision for
// the others. Pure logic over what the informers show, unit-tested without a server.
//
// The promise it keeps: a pod's gate is removed only when nodes hold the revision Ready and
// could take the pod now (resources, selectors, taints, host anti-affinity; scheduling_facts.h),
// and the pod is narrowed to those nodes (at most kMaxNarrowedNodes of them), so it cannot land
// where its weights are not.
// Pods are considered oldest first. A pod let go, and a pod let go earlier that no node has
// bound yet, takes its room on every node it may still choose (a what-if view, NodeRoom): two
// pods are never both sent to the last free GPU, and a pod let go now fits whichever of its
// nodes kube-scheduler picks for the others. A pod that would fit once those are bound waits for
// them (a pass later) without asking for more copies, and so does a pod that a Ready node could
// take once the pods being deleted there are gone (a rolling update's next pod, whose room an
// old pod frees within its grace period): staging a whole copy elsewhere for it would be
// wasted the moment the old pod goes. A pod that no Ready node can take asks for
// a node to stage the revision on: one that could take it, preferring a node already staging
// it, then one already asked to hold it, then the zone with the fewest copies, then the most
// free cache space; that node's room is counted as the pod's for the rest of the pass.
// A pod that names LoRA adapters goes only to nodes where every adapter is Ready as well. Where
// the revision is Ready on a node that could take it but an adapter is not, it waits for the
// adapters there (they are small and staged beside their base) instead of asking for another
// copy of the revision.
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "operator/gating/node_room.h"
#include "operator/gating/scheduling_facts.h"
#include "operator/prestage/prestage_choice.h"

namespace modelplane::controller {

// A pod whose gate is gone but that no node has bound yet, with the nodes it was narrowed to.
struct UnboundPod {
  PodFacts facts;
  std::vector<std::string> narrowed_to;
};

// Staging progress of the revision on a node, from its ModelCache status.
struct StagingProgress {
  std::int64_t bytes_done = 0;
  std::int64_t bytes_total = 0;
};

// The LoRA adapters a gated pod names, as the planner needs them.
struct AdapterReadiness {
  std::string adapters;               // "models/sql-lora, models/chat-lora", for messages
  std::set<std::string> ready_nodes;  // where every one of them is Ready
};

struct GatePlanRequest {
  std::string revision;  // "namespace/name", for messages
  std::int64_t total_bytes = 0;
  std::vector<NodeFacts> nodes;
  std::map<std::string, std::vector<PodFacts>> residents;  // non-terminal pods bound per node
  std::vector<PrestageCandidate> caches;                   // what each node's cache holds
  std::map<std::string, StagingProgress> progress;         // by node, while staging
  std::vector<PodFacts> gated;                             // oldest first
  std::vector<UnboundPod> unbound;
  std::chrono::system_clock::time_point now;  // for pods being deleted
  // By gated pod name: the pods that name adapters (absent: it names none).
  std::map<std::string, AdapterReadiness> adapters;
};

// The most nodes one pod is narrowed to. The narrowing is one node affinity term per node, and
// kube-scheduler matches every term against every node it evaluates, while every write of the
// pod carries them all: at 5,000 nodes a pod narrowed to about 600 nodes cost kube-scheduler
// 38-44 ms of PreFilter and the API server 35-45 ms more CPU than a pod without narrowing
// (docs/benchmarks.md, "Pods narrowed as the operator lets them go"). 100 is the fewest
// feasible nodes kube-scheduler itself looks for before it scores, so more buys no better
// choice. When more nodes qualify, a pod gets those the fewest unbound pods are narrowed to,
// zones in turn, so the pods of a rollout spread over the nodes and zones that hold the weights.
inline constexpr std::size_t kMaxNarrowedNodes = 100;

// How long past its grace period a pod being deleted still counts as about to go: a pod still
// there after that is stuck (a finalizer, a lost node), and is not waited for.
inline constexpr std::chrono::seconds kTerminationSlack{30};

struct PodGateDecision {
  std::string pod;  // its name (the revision's namespace)
  bool ungate = false;
  std::vector<std::string> nodes;  // ungate: the Ready nodes it may go to, sorted (see above)
  std::string message;             // what it waits for, or where it was let go
};

struct GatePlan {
  std::vector<PodGateDecision> decisions;  // one per gated pod, in request order
  std::vector<std::string> staging_nodes;  // sorted: where waiting pods need the revision
};

[[nodiscard]] GatePlan PlanGates(const GatePlanRequest& request);

}  // namespace modelplane::controller
