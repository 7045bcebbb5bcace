#include "operator/admission/grant_allocator.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace modelplane::controller {

std::string_view StagingPriorityName(StagingPriority priority) {
  switch (priority) {
    case StagingPriority::kRolloutStep: return "rollout-step";
    case StagingPriority::kRollbackRefill: return "rollback-refill";
    case StagingPriority::kPrestage: return "prestage";
    case StagingPriority::kSpeculative: return "speculative";
  }
  return "unknown";
}

std::vector<StagingGrant> AllocateGrants(int budget_streams,
                                         std::optional<std::int64_t> budget_bytes_per_second,
                                         const std::vector<StagingDemand>& demands) {
  std::vector<StagingGrant> grants;
  grants.reserve(demands.size());
  for (const StagingDemand& demand : demands) {
    grants.push_back({.node = demand.node, .revision = demand.revision});
  }
  std::vector<std::size_t> order(demands.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(demands[a].priority, demands[a].revision, demands[a].node) <
           std::tie(demands[b].priority, demands[b].revision, demands[b].node);
  });
  int left = std::max(0, budget_streams);
  std::size_t begin = 0;
  while (begin < order.size() && left > 0) {
    // One priority class: [begin, end).
    std::size_t end = begin;
    while (end < order.size() && demands[order[end]].priority == demands[order[begin]].priority) {
      ++end;
    }
    bool gave = true;
    while (left > 0 && gave) {
      gave = false;
      for (std::size_t i = begin; i < end && left > 0; ++i) {
        const std::size_t index = order[i];
        if (grants[index].streams < std::max(1, demands[index].wanted_streams)) {
          ++grants[index].streams;
          --left;
          gave = true;
        }
      }
    }
    begin = end;
  }
  if (budget_bytes_per_second) {
    const int granted = std::max(1, std::max(0, budget_streams) - left);
    for (StagingGrant& grant : grants) {
      if (grant.streams > 0) {
        grant.bytes_per_second = *budget_bytes_per_second * grant.streams / granted;
      }
    }
  }
  return grants;
}

}  // namespace modelplane::controller
