#include "node-agent/controller/node_demand.h"

#include "core/api/object_key.h"
#include "node-agent/controller/pod_readiness.h"

namespace modelplane::agent {

NodeDemand PlanNodeDemand(const std::vector<core::api::DesiredRevision>& desired,
                          const std::vector<core::Pod>& pods, core::api::Timestamp wall_now) {
  NodeDemand demand;
  std::set<std::string> wanted_keys;
  for (const core::api::DesiredRevision& entry : desired) {
    const bool lapsed = entry.pinned && entry.pinned_until && *entry.pinned_until <= wall_now;
    if (lapsed) continue;
    const std::string key =
        core::api::ObjectKey(entry.revision.namespace_name, entry.revision.name);
    if (wanted_keys.insert(key).second) {
      demand.wanted.push_back({entry.revision, entry.digest, entry.reason, entry.pinned,
                               entry.peers, entry.peer_ticket, entry.sources_proven});
    }
  }
  for (const core::Pod& pod : pods) {
    if (PodIsLive(pod)) {
      if (auto named = NamedRevision(pod)) {
        demand.pod_users[core::api::ObjectKey(named->namespace_name, named->name)].insert(
            pod.metadata.uid);
      }
    }
    if (pod.metadata.deletion_timestamp) continue;
    auto reference = GatedRevision(pod);
    if (!reference) continue;
    const std::string key = core::api::ObjectKey(reference->namespace_name, reference->name);
    if (wanted_keys.insert(key).second) {
      demand.wanted.push_back({*reference, "", std::string(core::api::kReasonInUse)});
    }
    demand.gated_pods.push_back(pod);
  }
  return demand;
}

int StagingPriority(std::string_view reason) {
  if (reason == core::api::kReasonInUse) return 0;
  if (reason == core::api::kReasonRollout) return 1;
  if (reason == core::api::kReasonRollback) return 2;
  return 3;
}

}  // namespace modelplane::agent
