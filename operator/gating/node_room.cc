#include "operator/gating/node_room.h"

#include <fmt/format.h>

#include "core/api/object_key.h"

namespace modelplane::controller {

NodeRoom::NodeRoom(const std::vector<NodeFacts>& nodes,
                   const std::map<std::string, std::vector<PodFacts>>& residents,
                   std::optional<std::chrono::system_clock::time_point> stuck_before) {
  for (const NodeFacts& node : nodes) {
    Entry entry{.facts = node, .free = node.allocatable};
    if (auto found = residents.find(node.name); found != residents.end()) {
      for (const PodFacts& pod : found->second) {
        if (pod.terminal) continue;
        if (stuck_before && pod.deletion_deadline && *pod.deletion_deadline >= *stuck_before) {
          continue;
        }
        for (const auto& [name, amount] : pod.requests) entry.free[name] -= amount;
        entry.residents.push_back(pod);
      }
    }
    nodes_.emplace(node.name, std::move(entry));
  }
}

const NodeFacts* NodeRoom::Node(const std::string& name) const {
  const auto found = nodes_.find(name);
  return found == nodes_.end() ? nullptr : &found->second.facts;
}

std::optional<std::string> NodeRoom::WhyNot(const PodFacts& pod, const std::string& node) const {
  const auto found = nodes_.find(node);
  if (found == nodes_.end()) return "is not a known node";
  const Entry& entry = found->second;
  if (auto mismatch = StaticMismatch(pod, entry.facts)) return mismatch;
  for (const auto& [name, amount] : pod.requests) {
    if (amount <= 0) continue;
    const auto free = entry.free.find(name);
    const std::int64_t have = free == entry.free.end() ? 0 : free->second;
    if (have < amount) return fmt::format("has not enough free {}", name);
  }
  for (const PodFacts& resident : entry.residents) {
    if (AntiAffinityConflict(pod, resident)) {
      return fmt::format("runs {}, which the pod's anti-affinity keeps apart",
                         core::api::ObjectKey(resident.namespace_name, resident.name));
    }
  }
  return std::nullopt;
}

void NodeRoom::Take(const PodFacts& pod, const std::string& node) {
  const auto found = nodes_.find(node);
  if (found == nodes_.end()) return;
  for (const auto& [name, amount] : pod.requests) found->second.free[name] -= amount;
  found->second.residents.push_back(pod);
}

}  // namespace modelplane::controller
