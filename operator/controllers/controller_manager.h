// Owns everything the operator runs while it leads: informers on ModelRevisions, ModelCaches,
// ModelRevocations, Nodes, Pods and the workloads that roll revisions (Deployments, StatefulSets,
// their ReplicaSets and ControllerRevisions), one work queue and runner per controller, the
// admission controller's passes (budgets and grants), the event recorder, and the wiring from
// informer events to queue keys:
//   ModelRevision change         -> that revision;
//   ModelCache added or deleted  -> the revisions its spec lists and those whose digest its
//                                   status reports, plus its lifecycle key;
//   ModelCache updated           -> only the revisions whose spec or status entry changed (all of
//                                   them on a resync), plus its lifecycle key;
//   Node added, removed, or its labels / readiness / cordon changed
//                                -> its lifecycle key, every revision that prestages and every
//                                   revision with gated pods;
//   Pod naming a revision added, deleted, or its gates / node / phase changed
//                                -> that revision (which need not exist yet);
//   a bound pod deleted          -> every revision with gated pods (room was freed);
//   Deployment or StatefulSet, or a ReplicaSet or ControllerRevision of one, changed
//                                -> the revisions its template names now and named before;
//   ModelRevocation changed      -> every revision (it may cover any) and its status key;
//   ModelRevision changed        -> also every revocation's status key (there are few);
//   ModelQuota changed           -> every revision of its namespace and its status key;
//   a revision's quota share changed (QuotaLedger)
//                                -> the status keys of its namespace's ModelQuotas.
// RunOperator builds one when it gains the lease and destroys it when it loses it; cluster
// tests build one directly.
// Thread safety: Start, WaitForSync and Stop from the owning thread.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "core/cancel/cancellation_token.h"
#include "core/kube/event_recorder.h"
#include "core/kube/informer.h"
#include "core/kube/latest_objects.h"
#include "core/kube/parsed_objects.h"
#include "core/kube/watch_stream.h"
#include "core/policy/source_policy.h"
#include "core/workqueue/controller_runner.h"
#include "core/workqueue/work_queue.h"
#include "operator/admission/admission_controller.h"
#include "operator/controllers/model_cache_controller.h"
#include "operator/controllers/model_revision_controller.h"
#include "operator/controllers/quota_status_controller.h"
#include "operator/controllers/revocation_controller.h"
#include "operator/controllers/workload_inventory.h"

namespace modelplane::controller {

struct ControllerOptions {
  std::string namespace_scope;  // ModelRevisions watched; "" = every namespace
  std::chrono::seconds resync_period{300};
  int revision_workers = 4;
  int cache_workers = 2;
  std::string reporting_instance;  // Events' reportingInstance (the pod or host name)
  // What revisions may name; absent: every revision with sources is invalid (SourcePolicyDenied).
  std::optional<core::SourcePolicy> source_policy;
  // Budgets and grants for remote sources (admission/admission_controller.h).
  AdmissionOptions admission;
  // Signs the peer tickets written beside each staging node's peers; null: none are written
  // (peers that check scope then serve those nodes nothing).
  std::shared_ptr<const PeerTicketIssuer> peer_tickets;
};

class ControllerManager {
 public:
  ControllerManager(core::KubeClient& client, const core::Watcher& watcher,
                    ControllerOptions options, ControllerMetrics& metrics,
                    const core::Logger& logger, const core::Clock& clock);
  ControllerManager(const ControllerManager&) = delete;
  ControllerManager& operator=(const ControllerManager&) = delete;
  ~ControllerManager();  // Stop()

  // Starts the informers, waits until all three have listed (false if `stop` fired first),
  // then starts the controllers' workers.
  [[nodiscard]] bool Start(core::CancellationToken& stop);
  // Stops the workers (letting in-flight reconciles finish), then the informers.
  void Stop();

  [[nodiscard]] const core::ControllerStats& revision_stats() const;
  [[nodiscard]] const core::ControllerStats& cache_stats() const;

 private:
  // What both controllers are given; the informers and recorder it names are built first.
  [[nodiscard]] ControllerContext Context(core::KubeClient& client, ControllerMetrics& metrics,
                                          const core::Clock& clock);
  void WireHandlers();
  void WireWorkloadHandlers();
  void EnqueueRevisionsOfCache(const nlohmann::json& cache);
  void EnqueueRevisionKeys(const std::vector<std::string>& keys);
  void EnqueueRevisionsWithDigests(const std::vector<std::string>& digests);
  void EnqueuePrestagingRevisions();
  void EnqueueRevisionsWithGatedPods();
  void EnqueueRevocations();
  // Every revision of the namespace, and its ModelQuotas' status keys.
  void EnqueueNamespaceQuotas(const std::string& namespace_name);
  // The caches whose spec.holdings may change because `cache`'s status entries for `digests`
  // changed (holdings.h, HoldingMayChange), or, with no cache, because their revocation did.
  void EnqueueHoldersOfDigests(const nlohmann::json* cache,
                               const std::vector<std::string>& digests);

  core::KubeClient& client_;
  const ControllerOptions options_;
  const core::Logger logger_;
  const core::Clock& clock_;
  core::Informer revisions_;
  core::Informer caches_;
  core::Informer nodes_;
  core::Informer pods_;
  core::Informer revocations_;
  core::Informer quotas_;
  core::Informer deployments_;
  core::Informer stateful_sets_;
  core::Informer replica_sets_;
  core::Informer controller_revisions_;
  // Kept without what the informer's store holds already and no reader of them uses: the raw
  // object and the metadata the parser does not know (managedFields is most of it).
  core::ParsedObjects<core::api::ModelCache> parsed_caches_{[](const nlohmann::json& object) {
    auto cache = core::api::ModelCacheFromJson(object);
    if (cache) cache->metadata.unknown_fields = nlohmann::json::object();
    return cache;
  }};
  core::ParsedObjects<core::Node> parsed_nodes_{[](const nlohmann::json& object) {
    auto node = core::NodeFromJson(object);
    if (node) {
      node->raw = nullptr;
      node->metadata.unknown_fields = nlohmann::json::object();
    }
    return node;
  }};
  WorkloadInventory workload_inventory_;
  core::LatestObjects latest_caches_;  // the controllers and admission_ write ModelCaches
  SourceRates source_rates_;           // admission_ writes, the revision controller reads
  core::EventRecorder events_;
  core::WorkQueue revision_queue_;
  core::WorkQueue cache_queue_;
  core::WorkQueue revocation_queue_;
  core::WorkQueue quota_queue_;
  QuotaLedger quota_ledger_;  // before the controllers, whose context points at it
  ModelRevisionController revision_controller_;
  ModelCacheController cache_controller_;
  RevocationController revocation_controller_;
  QuotaStatusController quota_controller_;
  core::ControllerRunner revision_runner_;
  core::ControllerRunner cache_runner_;
  core::ControllerRunner revocation_runner_;
  core::ControllerRunner quota_runner_;
  AdmissionController admission_;
  bool started_ = false;
  // Whether the API server serves ModelQuotas: a cluster upgraded without `kubectl apply -f
  // crds/` does not, and then holds no quota to enforce (the informer is not started).
  bool quotas_served_ = false;
};

}  // namespace modelplane::controller
