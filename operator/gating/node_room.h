// A what-if view of the nodes' free resources and residents, so the gate planner can tell which
// nodes could still take a pod after the pods it already let go (or is about to) take theirs.
// Thread safety: a plain value, used by one reconcile.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "operator/gating/scheduling_facts.h"

namespace modelplane::controller {

class NodeRoom {
 public:
  // `residents`: non-terminal pods bound to each node. With `stuck_before`, the view once the
  // pods being deleted are gone: each resident being deleted holds no room, unless its grace
  // period ended before `stuck_before` (still there that long after: stuck, it keeps its room).
  NodeRoom(const std::vector<NodeFacts>& nodes,
           const std::map<std::string, std::vector<PodFacts>>& residents,
           std::optional<std::chrono::system_clock::time_point> stuck_before = std::nullopt);

  // Why the pod cannot run on the node now (statically, for want of resources, or because of
  // anti-affinity with a pod there), or nullopt when it can.
  [[nodiscard]] std::optional<std::string> WhyNot(const PodFacts& pod,
                                                  const std::string& node) const;
  // Counts the pod as running on the node from now on.
  void Take(const PodFacts& pod, const std::string& node);

  [[nodiscard]] const NodeFacts* Node(const std::string& name) const;

 private:
  struct Entry {
    NodeFacts facts;
    ResourceList free;
    std::vector<PodFacts> residents;
  };
  std::map<std::string, Entry> nodes_;
};

}  // namespace modelplane::controller
