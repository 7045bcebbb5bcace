// The Deployments and StatefulSets that use a revision, read from the operator's informers:
// each with its history (the ReplicaSets or ControllerRevisions it owns) and its pods (owned by
// those ReplicaSets, or by the StatefulSet), as rollout planning needs them.
//
// Indexes (added to the informers by AddIndexers, before they start):
//   workloads and history objects by the revision key ("namespace/name") their template names;
//   history objects and pods by the uid of their controller owner; workloads by their uid.
// Thread safety: read-only over informer stores; safe from any worker.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/api/model_revision.h"
#include "core/kube/informer.h"
#include "operator/rollouts/rollout_plan.h"

namespace modelplane::controller {

struct WorkloadInformers {
  core::Informer& deployments;
  core::Informer& stateful_sets;
  core::Informer& replica_sets;
  core::Informer& controller_revisions;
  const core::Informer& pods;  // the cluster's non-terminal pods, indexed by kPodsByOwner
};

// Pod index: the uid of the pod's controller owner (its ReplicaSet or StatefulSet).
inline constexpr char kPodsByOwner[] = "modelplane.io/controller-uid";

class WorkloadInventory {
 public:
  explicit WorkloadInventory(WorkloadInformers informers) : informers_(informers) {}

  // Adds the indexes this class reads; call before the informers start. The pods informer's
  // index (kPodsByOwner) is added by whoever owns it, with ControllerUidIndex().
  void AddIndexers();

  // The workloads whose template names `revision_key` now or named it before, with their pods;
  // completed_at from `previous` (the revision's last status) for workloads listed there.
  [[nodiscard]] std::vector<WorkloadPods> ForRevision(
      const std::string& revision_key, const std::vector<core::api::WorkloadUse>& previous) const;

  // Revision keys a workload object (Deployment or StatefulSet) names now and before.
  [[nodiscard]] std::vector<std::string> RevisionKeysOf(const nlohmann::json& workload,
                                                        std::string_view kind) const;
  // Revision keys of the workload that owns a pod (through its ReplicaSet), if any.
  [[nodiscard]] std::vector<std::string> RevisionKeysOfPodOwner(const nlohmann::json& pod) const;
  // The workload's key (Workload::Key) of a pod's owner, or nullopt.
  [[nodiscard]] std::optional<std::string> WorkloadKeyOfPod(const nlohmann::json& pod) const;

 private:
  [[nodiscard]] std::optional<Workload> Read(const nlohmann::json& object,
                                             std::string_view kind) const;
  [[nodiscard]] std::vector<WorkloadPod> PodsOf(const nlohmann::json& object,
                                                std::string_view kind) const;

  WorkloadInformers informers_;
};

[[nodiscard]] core::IndexFunction ControllerUidIndex();

}  // namespace modelplane::controller
