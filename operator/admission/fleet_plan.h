// Who may read which remote source, decided for the whole fleet once per admission pass. Pure.
//
// Demand: every ModelCache spec entry whose revision the node does not hold Ready yet (and was
// not refused for room or by the source policy) needs its revision's sources, at a priority
// from the entry's reason: pods waiting (in-use) and rollout steps first, rollback refills,
// prestage, anything else last.
//
// Fan-out: per zone and revision, one seeder reads the origin; the zone's other nodes read
// from it and from each other (node-agent/controller/peer_candidates.h) and get 0 streams of
// the origin. No one in a zone reads the origin while the zone holds the revision Ready
// somewhere. A seeder stays the seeder while it makes progress; one that made none for the
// stall timeout (its agent died, its node hangs) is replaced by the follower that holds the
// most of the revision. Nodes that serve no peers never seed.
//
// Every node with demand gets a grant entry for each source its stagings name, 0 for followers,
// so its agent waits for its seeder instead of falling back to its safe capacity. A node whose
// agent has not reported a status yet is left out: it cannot read, and its zone is unknown.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "operator/admission/grant_allocator.h"
#include "operator/admission/source_budget.h"

namespace modelplane::controller {

// The ModelCaches a pass plans from, shared with the informers' parsed copies (core/kube/
// parsed_objects.h) instead of copied: a pass runs every two seconds over every node's cache.
using CacheSnapshots = std::vector<std::shared_ptr<const core::api::ModelCache>>;

// What the plan needs of a ModelRevision.
struct RevisionSources {
  std::string digest;                   // status.digest
  std::vector<std::string> identities;  // its sources' identities, in spec order
};

struct FleetPlanInput {
  CacheSnapshots caches;                             // none null
  std::map<std::string, RevisionSources> revisions;  // "namespace/name"; valid, not revoked
  std::map<std::string, std::string> seeders;        // the last pass's: "zone|digest" -> node
  std::set<std::string> stalled;  // StagingKey: staging without progress for too long
  int wanted_streams = 16;        // what one staging asks of a source
};

struct FleetPlan {
  std::map<std::string, std::vector<StagingDemand>> demands;  // by source identity
  std::map<std::string, std::set<std::string>> node_sources;  // node -> identities it needs
  std::map<std::string, std::string> seeders;                 // "zone|digest" -> node
  // Stagings that wait on a peer instead of the origin, by source identity.
  std::map<std::string, int> followers;
};

[[nodiscard]] StagingPriority PriorityOfReason(std::string_view reason);

// One node's staging of one digest, as FleetPlanInput::stalled names it: "node|digest".
[[nodiscard]] std::string StagingKey(std::string_view node, std::string_view digest);

[[nodiscard]] FleetPlan PlanFleet(const FleetPlanInput& input);

// The fleet's telemetry for one source summed over the ModelCache statuses that reported it
// since `newer_than` (older reports are agents that stopped reading it, or stopped).
[[nodiscard]] SourceObservation ObserveSource(const CacheSnapshots& caches,
                                              const std::string& identity,
                                              const core::api::Timestamp& newer_than);

}  // namespace modelplane::controller
