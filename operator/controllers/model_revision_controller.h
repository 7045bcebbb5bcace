// The ModelRevision controller: for one revision ("namespace/name") it validates the spec,
// computes the digest, places prestaged copies (placement.h), plans what the workloads rolling
// to or from it ask of the caches (revision_rollouts.h) and the gates of the pods that name it
// (pod_gates.h: which may go, which nodes must stage it for the others), writes its entries
// into the chosen nodes' ModelCache specs (and out of every other: reason in-use where a pod
// runs or waits for it, else rollback (pinned) or rollout, else prestage), lets the pods go
// whose weights are verified, names in each entry the peers that node reads it from (so no
// agent reads another node's status), and rebuilds the revision's status from those ModelCaches'
// statuses (revision_status.h).
//
// Level-based: each pass compares the whole desired state with what the informers show and
// writes only differences, so any event (or a resync) for the revision leads to the same place.
// An invalid spec ends the pass with Valid=False, one Warning Event and no retry; a deleted
// revision has its entries removed before the finalizer is released.
// Thread safety: Reconcile runs concurrently for different keys (the work queue never hands one
// key to two workers).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/api/model_revision.h"
#include "core/workqueue/controller_runner.h"
#include "operator/controllers/controller_context.h"
#include "operator/controllers/entry_intent.h"
#include "operator/controllers/peer_choice.h"
#include "operator/controllers/pod_gates.h"
#include "operator/controllers/revision_quota.h"
#include "operator/controllers/revision_rollouts.h"
#include "operator/controllers/source_proofs.h"
#include "operator/prestage/prestage_choice.h"
#include "operator/status/revision_status.h"

namespace modelplane::controller {

namespace api = core::api;

class ModelRevisionController {
 public:
  explicit ModelRevisionController(const ControllerContext& context)
      : context_(context), gates_(context), rollouts_(context) {}

  [[nodiscard]] core::Result<core::ReconcileResult> Reconcile(const std::string& key);

 private:
  struct Plan {
    RevisionObservation observation;
    std::map<std::string, EntryIntent> desired;   // by node
    std::optional<RevisionGates> gates;           // set while the revision can be staged
    std::optional<RevisionRolloutPlan> rollouts;  // likewise
    api::SourceProofs proofs;                     // whether its own sources serve its bytes
    RevisionQuota quota;                          // what its namespace's ModelQuotas cut
  };

  Plan Observe(const nlohmann::json& raw, bool deleting);
  // Revoked: the nodes whose caches still list the digest (the purge still to happen).
  // The ModelRevocation that covers the revision (api::CoveringRevocation), the first by name
  // when several do.
  std::optional<api::RevokedBy> RevokedBy(const api::ModelRevision& revision,
                                          const std::string& digest,
                                          const std::vector<api::SignedBy>& signed_by) const;
  void ObserveNodes(Plan& plan);
  // Whom each desired node that does not hold the revision yet reads it from (peer_choice.h).
  void PlanPeers(Plan& plan, const std::string& key);
  std::vector<PrestageCandidate> Candidates(const std::string& key, const std::string& digest,
                                            const std::map<std::string, std::string>& node_selector,
                                            const api::SourceProofs& proofs);
  core::Status SyncEntries(const api::RevisionReference& reference, const std::string& digest,
                           const std::map<std::string, EntryIntent>& desired, bool sources_proven);
  core::Status SetFinalizer(const nlohmann::json& raw, bool present);
  core::Status WriteStatus(const nlohmann::json& raw, const api::ModelRevisionStatus& status);
  // A Warning Event when the condition `type` turned False or its message changed.
  void RecordWarning(const nlohmann::json& raw, std::string_view type,
                     const api::ModelRevisionStatus& status,
                     const std::vector<api::Condition>& previous);

  ControllerContext context_;
  PodGates gates_;
  RevisionRollouts rollouts_;
};

}  // namespace modelplane::controller
