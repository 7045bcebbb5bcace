#include "operator/rollouts/rollout_plan.h"

#include <algorithm>

#include <fmt/format.h>

namespace modelplane::controller {
namespace {

namespace api = core::api;

const PrestageCandidate* CacheOf(const std::vector<PrestageCandidate>& caches,
                                 const std::string& node) {
  for (const PrestageCandidate& cache : caches) {
    if (cache.name == node) return &cache;
  }
  return nullptr;
}

bool CanHold(const PrestageCandidate& cache, std::int64_t total_bytes) {
  if (cache.held != HeldState::kNone || cache.currently_chosen) return true;
  const std::int64_t free = FreeBytes(cache);
  return free < 0 || free >= total_bytes;
}

void Merge(RolloutPlan& plan, const std::string& node, NodeIntent intent) {
  auto [existing, inserted] = plan.nodes.emplace(node, intent);
  if (inserted) return;
  // A node pinned for a rollback stays pinned whatever else asks for it, until the latest pin.
  if (!intent.pinned) return;
  NodeIntent& kept = existing->second;
  if (!kept.pinned) {
    kept = intent;
  } else if (!intent.pinned_until || !kept.pinned_until) {
    kept.pinned_until.reset();  // pinned with no end by one of them
  } else {
    kept.pinned_until = std::max(*kept.pinned_until, *intent.pinned_until);
  }
}

void PlanRollingTo(const RolloutPlanRequest& request, const WorkloadPods& entry,
                   RolloutPlan& plan) {
  const Workload& workload = entry.workload;
  std::set<std::string> old_nodes;
  for (const WorkloadPod& pod : entry.pods) {
    if (pod.revision != request.revision && !pod.node.empty()) old_nodes.insert(pod.node);
  }
  if (const auto pins = request.serving_nodes.find(workload.previous_revision);
      pins != request.serving_nodes.end()) {
    old_nodes.insert(pins->second.begin(), pins->second.end());
  }
  RolloutBarrier barrier;
  std::vector<std::string> left_out;
  for (const std::string& node : old_nodes) {
    if (static_cast<std::int32_t>(barrier.nodes.size()) >= workload.replicas) break;
    const PrestageCandidate* cache = CacheOf(request.caches, node);
    if (cache == nullptr || request.failed_nodes.contains(node) ||
        !CanHold(*cache, request.total_bytes)) {
      left_out.push_back(node);
      continue;
    }
    barrier.nodes.push_back(node);
    Merge(plan, node, {.reason = std::string(api::kReasonRollout)});
    if (cache->held == HeldState::kReady) ++barrier.ready;
  }
  barrier.met = barrier.ready == static_cast<int>(barrier.nodes.size());
  const std::string subject =
      fmt::format("{} {}/{}", workload.kind, workload.namespace_name, workload.name);
  barrier.message =
      barrier.met
          ? fmt::format(
                "ModelRevision {}/{} is Ready on the {} node{} {} ran on ({}); its new "
                "pods may roll",
                workload.namespace_name, request.revision, barrier.nodes.size(),
                barrier.nodes.size() == 1 ? "" : "s", subject, fmt::join(barrier.nodes, ", "))
          : fmt::format(
                "waiting for ModelRevision {}/{} to be prestaged where {} runs before its "
                "pods roll: Ready on {} of {} nodes ({})",
                workload.namespace_name, request.revision, subject, barrier.ready,
                barrier.nodes.size(), fmt::join(barrier.nodes, ", "));
  if (!left_out.empty()) {
    barrier.message +=
        fmt::format("; not staged on {} (staging failed or no room)", fmt::join(left_out, ", "));
  }
  // A paused rollout holds its canary at the pods it has: a new pod created just before the
  // pause does not go either.
  if (workload.paused) {
    barrier.met = false;
    barrier.message = fmt::format(
        "{} is paused (kubectl rollout pause): its new pods stay gated until it resumes; "
        "ModelRevision {}/{} is Ready on {} of {} nodes it runs on",
        subject, workload.namespace_name, request.revision, barrier.ready, barrier.nodes.size());
  }

  // Surge pods may find no room beside the old ones: stage it on maxSurge more nodes too.
  if (workload.max_surge > 0) {
    std::vector<PrestageCandidate> others;
    for (const PrestageCandidate& cache : request.caches) {
      if (!old_nodes.contains(cache.name) && !request.failed_nodes.contains(cache.name)) {
        others.push_back(cache);
      }
    }
    const PrestageChoice surge = ChoosePrestageNodes({.node_selector = workload.node_selector,
                                                      .nodes = workload.max_surge,
                                                      .total_bytes = request.total_bytes},
                                                     others);
    for (const std::string& node : surge.chosen) {
      Merge(plan, node, {.reason = std::string(api::kReasonRollout)});
    }
  }
  plan.barriers.emplace(workload.Key(), std::move(barrier));
}

std::optional<api::Timestamp> PlanRollingFrom(const RolloutPlanRequest& request,
                                              const WorkloadPods& entry, RolloutPlan& plan) {
  const Workload& workload = entry.workload;
  std::optional<api::Timestamp> until;
  std::optional<api::Timestamp> completed_at;
  if (workload.complete) {
    completed_at = entry.completed_at.value_or(request.now);
    until = *completed_at + request.rollback_window;
    if (*until <= request.now) return completed_at;  // the window is over
  }
  std::set<std::string> nodes;
  for (const WorkloadPod& pod : entry.pods) {
    if (!pod.node.empty()) nodes.insert(pod.node);
  }
  if (const auto pins = request.serving_nodes.find(request.revision);
      pins != request.serving_nodes.end()) {
    nodes.insert(pins->second.begin(), pins->second.end());
  }
  for (const std::string& node : nodes) {
    const PrestageCandidate* cache = CacheOf(request.caches, node);
    if (cache == nullptr || cache->held == HeldState::kNone) continue;
    Merge(plan, node,
          {.reason = std::string(api::kReasonRollback), .pinned = true, .pinned_until = until});
  }
  if (until && (!plan.next_change || *until < *plan.next_change)) plan.next_change = until;
  return completed_at;
}

}  // namespace

RolloutPlan PlanRollouts(const RolloutPlanRequest& request) {
  RolloutPlan plan;
  for (const WorkloadPods& entry : request.workloads) {
    const Workload& workload = entry.workload;
    api::WorkloadUse use{.kind = workload.kind, .name = workload.name};
    for (const WorkloadPod& pod : entry.pods) {
      if (pod.revision != request.revision) continue;
      ++use.pods;
      if (pod.ready) ++use.ready_pods;
    }
    if (workload.current_revision == request.revision) {
      use.role = "current";
      const bool rolling = std::any_of(entry.pods.begin(), entry.pods.end(), [&](const auto& pod) {
        return pod.revision != request.revision;
      });
      if (rolling) PlanRollingTo(request, entry, plan);
    } else if (workload.previous_revision == request.revision) {
      use.role = "previous";
      use.completed_at = PlanRollingFrom(request, entry, plan);
    } else {
      continue;
    }
    plan.workloads.push_back(std::move(use));
  }
  std::sort(plan.workloads.begin(), plan.workloads.end(), [](const auto& a, const auto& b) {
    return std::tie(a.kind, a.name) < std::tie(b.kind, b.name);
  });
  return plan;
}

}  // namespace modelplane::controller
