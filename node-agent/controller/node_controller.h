// The node agent's control loop for one node. Level-based: every pass reads the node's
// ModelCache (spec: what the operator wants here, whom to read it from, what the fleet knows of
// what it holds), the ModelRevisions it needs (read by name: revision_reader.h), and the pods on
// this node that wait for weights, then
//   - asks the Stager for every wanted revision not yet in the store (a gated pod on a node that
//     lacks its revision makes the node stage it: reason in-use),
//   - rebuilds the ModelCache status from the store and the stager (state per revision, bytes,
//     tier, stage timestamps, capacity / used / reserved, the peer endpoint) and applies it with
//     server-side apply when it changed, at most once per status interval while only byte
//     counts move,
//   - sets the `modelplane.io/weights-ready` condition True on gated pods whose revision is
//     verified here, and False again (reason WeightsNotVerified or RevisionRevoked) on pods
//     whose condition is True but whose revision is no longer verified here or is revoked.
// With retention set (cache_retention.h), every pass also protects what is in use (CSI mount
// leases, live pods on this node naming a revision), reserved, pinned or wanted, admits each
// staging only if it fits (else Failed with reason InsufficientCapacity and an Event on the
// ModelCache), withholds revoked revisions' blobs from peers and purges them, evicts between the
// watermarks, and reports per revision its unique bytes, protection, lastUsed and Evicting.
// Spec entries whose pin lapsed (pinned, pinnedUntil past) count as no longer listed.
// It watches nothing of other nodes: its own ModelCache (a field selector) and its own pods, so
// its cost to the API server does not grow with the fleet (docs/architecture.md, "Fleet scale").
// It also answers the CSI plugin's questions about revisions (RevisionResolver), reading the
// ModelRevision then, and the store.
// It never reads its own status back as input, except to carry over tier and timestamps of
// revisions staged before a restart (the store keeps bytes, not history).
//
// Thread safety: Start and Stop from the owning thread; Poke and the RevisionResolver calls from
// anywhere.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/model_cache.h"
#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/kube/builtin_types.h"
#include "core/kube/event_recorder.h"
#include "core/kube/informer.h"
#include "core/kube/kube_client.h"
#include "core/kube/watch_stream.h"
#include "core/log/logger.h"
#include "core/metrics/metrics_registry.h"
#include "core/policy/source_policy.h"
#include "core/workqueue/controller_runner.h"
#include "core/workqueue/work_queue.h"
#include "node-agent/controller/cache_retention.h"
#include "node-agent/controller/revision_entries.h"
#include "node-agent/controller/revision_index.h"
#include "node-agent/controller/revision_reader.h"
#include "node-agent/controller/serving_protection.h"
#include "node-agent/controller/stager.h"
#include "node-agent/controller/status_pacer.h"
#include "node-agent/csi/revision_resolver.h"
#include "node-agent/csi/volume_leases.h"
#include "node-agent/fetch/source_admission.h"
#include "node-agent/fetch/source_telemetry.h"
#include "node-agent/possession/possession_ledger.h"
#include "node-agent/possession/possession_prover.h"
#include "node-agent/store/cache_store.h"

namespace modelplane::agent {

struct NodeControllerOptions {
  std::string node_name;
  std::string zone;           // the node's topology.kubernetes.io/zone; peers compare it
  std::string peer_endpoint;  // "host:port" other agents dial; empty when not serving
  std::chrono::milliseconds status_interval{1'000};
  std::chrono::seconds resync_period{300};
  // With retention: how often a pass runs when nothing else wakes it (watermarks, lapsing pins).
  std::chrono::milliseconds retention_interval{30'000};
  std::string field_manager = "modelplane-node-agent";
  // What revisions may name; absent: every revision with spec sources is refused
  // (SourcePolicyDenied) before it is staged.
  std::optional<core::SourcePolicy> source_policy;
  // The cache filesystem's write bandwidth as measured at start (media_probe.h); 0: unknown.
  std::int64_t media_bandwidth_bytes_per_second = 0;
  // What stagings and peer uploads may take while pods that use a revision run here.
  ServingProtection serving;
};

class NodeController final : public RevisionResolver {
 public:
  struct Dependencies {
    core::KubeClient& client;
    const core::Watcher& watcher;
    CacheStore& store;
    const core::Logger& logger;
    const core::Clock& clock;
    // Registers modelplane_agent_reconcile_total{result} when set.
    core::MetricsRegistry* metrics = nullptr;
    // The node's grants go here on every pass (spec.grants); may be null.
    SourceAdmission* admission = nullptr;
    // Reported in status.sources for the admission controller; may be null.
    const SourceTelemetryRecorder* telemetry = nullptr;
    // Set on every pass from whether the node serves (serving_protection.h); may be empty.
    std::function<void(const TransferLimits&)> apply_limits;
  };

  NodeController(Dependencies dependencies, NodeControllerOptions options);
  NodeController(const NodeController&) = delete;
  NodeController& operator=(const NodeController&) = delete;
  ~NodeController() override;

  // The stager is created by the caller with Poke as its on_change; set before Start.
  void SetStager(Stager* stager) { stager_ = stager; }
  // Proofs that a revision's own sources serve the bytes the node holds for its digest (the
  // prover made with Poke as its on_change); set before Start. Without them nothing is proven
  // here, and held bytes serve a revision only once the operator says another node proved it.
  void SetPossession(PossessionLedger* ledger, PossessionProver* prover) {
    ledger_ = ledger;
    prover_ = prover;
  }
  // Retention and what it needs from the rest of the agent; set before Start. Without it the
  // loop stages whatever is wanted and never evicts.
  struct RetentionHooks {
    CacheRetention* retention = nullptr;
    std::function<std::vector<VolumeLease>()> leases;  // the CSI plugin's; empty without it
    core::EventRecorder* events = nullptr;
  };
  void SetRetention(RetentionHooks hooks) { retention_ = std::move(hooks); }
  // The endpoint other agents dial, once the peer server listens (it may start after the
  // controller, when its certificate comes from the operator); status advertises it from then.
  void SetPeerEndpoint(std::string endpoint) {
    const std::lock_guard lock(peer_endpoint_mutex_);
    peer_endpoint_ = std::move(endpoint);
  }
  // Starts the informers and, once they synced, the loop. False if `stop` fired first.
  [[nodiscard]] bool Start(core::CancellationToken& stop);
  void Stop();
  void Poke();

  // RevisionResolver: the ModelRevision from the informer (digest as the agent computes it),
  // Ready here when the store holds its manifest.
  [[nodiscard]] RevisionStatus ResolveRevision(std::string_view namespace_name,
                                               std::string_view name) const override;
  [[nodiscard]] bool RevisionsSynced() const override;

 private:
  [[nodiscard]] core::Result<core::ReconcileResult> Reconcile();
  // Whether the operator says a digest this node holds is revoked (spec.holdings).
  [[nodiscard]] bool RevokedHere(const core::Sha256Bytes& digest) const;
  // Whether the revision ("namespace/name") may use what the node holds under `digest`: its
  // own sources were shown to serve those bytes, here (the ledger) or by another node (the
  // operator's word, as the last pass read it).
  [[nodiscard]] bool SourcesProvenHere(const std::string& key,
                                       const core::Sha256Bytes& digest) const;
  // Fills the fact's sources_proven and proof: a staging that read every byte from the
  // revision's own sources is recorded in the ledger first.
  void ObserveSourceProof(WantedRevisionFacts& fact);
  void CountReconcile(const core::Result<core::ReconcileResult>& result) const;
  [[nodiscard]] core::Status EnsureCacheExists();
  // Writes `status` and returns the status the server holds afterwards, in ToJson's form, with
  // the object's resourceVersion then.
  struct AppliedStatus {
    nlohmann::json status;
    std::string resource_version;
  };
  [[nodiscard]] core::Result<AppliedStatus> ApplyStatus(const nlohmann::json& status);
  // What a pass found for the revisions gated pods name, by "ns/name" (each to its digest).
  // Gated pods whose revision is verified here go Ready (weights-ready True, with the tier of
  // `entries` that served it); Ready ones whose revision is revoked or no longer verified go
  // back (node_controller_readiness.cc).
  [[nodiscard]] core::Status UpdateWeightsReady(
      const std::vector<core::Pod>& gated_pods, const WeightsVerdicts& weights,
      const std::vector<core::api::CachedRevision>& entries);
  [[nodiscard]] core::Status SetWeightsNotReady(const core::Pod& pod, std::string_view reason,
                                                const std::string& message);
  [[nodiscard]] std::string NowStamp() const;
  void RecordEvent(const core::api::ModelCache& cache, const std::string& type,
                   const std::string& reason, const std::string& action, const std::string& note);

  const Dependencies dependencies_;
  const NodeControllerOptions options_;
  const core::Logger logger_;
  Stager* stager_ = nullptr;
  PossessionLedger* ledger_ = nullptr;
  PossessionProver* prover_ = nullptr;
  RetentionHooks retention_;
  core::Informer caches_;
  core::Informer pods_;
  core::CounterFamily* reconciles_ = nullptr;  // by result; null without a registry
  core::WorkQueue queue_;
  core::ControllerRunner runner_;

  // Loop state, touched only by the single reconcile worker.
  std::set<core::Sha256Bytes> staging_wanted_;
  RevisionReader revisions_{dependencies_.client, dependencies_.clock, {}};
  RevisionIndex index_;
  std::set<core::Sha256Bytes> refused_;  // stagings refused for capacity (one Event each time)
  // The failure each failed staging last reported in an Event: one Event per new failure,
  // not one per pass (a staging retried and failing the same way stays quiet).
  std::map<core::Sha256Bytes, std::string> failure_reported_;
  StatusPacer pacer_;

  // Written at each pass, read by the CSI plugin's threads: the digests the operator says are
  // revoked, and the revisions the loop read last ("ns/name"), for mounts while the API server
  // does not answer.
  mutable std::mutex revoked_mutex_;
  std::set<core::Sha256Bytes> revoked_here_;
  std::map<std::string, core::ObjectPtr> last_read_;
  std::map<std::string, std::string> proven_by_fleet_;  // "ns/name" -> the digest proven
  [[nodiscard]] std::string PeerEndpoint() const {
    const std::lock_guard lock(peer_endpoint_mutex_);
    return peer_endpoint_;
  }
  mutable std::mutex peer_endpoint_mutex_;
  std::string peer_endpoint_ = options_.peer_endpoint;  // until SetPeerEndpoint
  std::optional<TransferLimits> limits_;                // the last applied
};

}  // namespace modelplane::agent
