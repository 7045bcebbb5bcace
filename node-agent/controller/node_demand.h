// What this node should hold on one pass of the agent's loop, decided from what it observed:
// the operator's list in its ModelCache spec, and the pods on the node. The first piece of the
// loop's plan that is a pure function (issue 36 splits the rest the same way).
//
// The operator's entries come first, in its order, less those whose pin has lapsed (the
// operator drops them, and until it does they are not worth keeping); then the revisions that
// gated pods here wait for and the operator has not listed yet, as in-use. Each revision is
// wanted once, by its namespace/name.
// Thread safety: pure functions.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/model_cache.h"
#include "core/api/timestamp.h"
#include "core/kube/builtin_types.h"

namespace modelplane::agent {

struct WantedRevision {
  core::api::RevisionReference reference;
  std::string digest_hint;  // from the ModelCache spec; the revision's own digest wins
  std::string reason;       // prestage, in-use, rollout or rollback
  bool pinned = false;      // and the pin has not lapsed
  std::vector<core::api::PeerSource> peers;  // whom the operator says to read it from
  std::string peer_ticket;                   // what shows those peers it may (peer_ticket.h)
  // The operator says some node proved the revision's own sources serve the bytes of
  // `digest_hint` (DesiredRevision.sources_proven).
  bool sources_proven = false;
};

struct NodeDemand {
  std::vector<WantedRevision> wanted;
  // Pods waiting at the readiness gate for a revision, not being deleted.
  std::vector<core::Pod> gated_pods;
  // "namespace/name" of a revision -> the uids of live pods that name it (protects it).
  std::map<std::string, std::set<std::string>> pod_users;
};

// Pods that cannot be read as pods are skipped (the informer holds what the API server sent).
[[nodiscard]] NodeDemand PlanNodeDemand(const std::vector<core::api::DesiredRevision>& desired,
                                        const std::vector<core::Pod>& pods,
                                        core::api::Timestamp wall_now);

// Who stages first when room is short: a pod waits for it, then a rollout step, a rollback
// refill, and last a prestage (speculative). Lower goes first.
[[nodiscard]] int StagingPriority(std::string_view reason);

}  // namespace modelplane::agent
