// The node agent's control loop for one node. Level-based: every pass reads the node's
// ModelCache (spec: what the operator wants here), the ModelRevisions it names, and the pods on
// this node that wait for weights, then
//   - asks the Stager for every wanted revision not yet in the store (a gated pod on a node that
//     lacks its revision makes the node stage it: reason in-use),
//   - rebuilds the ModelCache status from the store and the stager (state per revision, bytes,
//     tier, stage timestamps, capacity / used / reserved, the peer endpoint) and applies it with
//     server-side apply when it changed, at most once per status interval while only byte
//     counts move,
//   - sets the `modelplane.io/weights-ready` condition True on gated pods whose revision is
//     verified here.
// It never reads its own status back as input, except to carry over tier and timestamps of
// revisions staged before a restart (the store keeps bytes, not history).
//
// Thread safety: Start and Stop from the owning thread; Poke from anywhere.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/kube/informer.h"
#include "core/kube/kube_client.h"
#include "core/kube/watch_stream.h"
#include "core/log/logger.h"
#include "core/workqueue/controller_runner.h"
#include "core/workqueue/work_queue.h"
#include "node-agent/controller/stager.h"
#include "node-agent/store/cache_store.h"

namespace modelplane::agent {

struct NodeControllerOptions {
  std::string node_name;
  std::string peer_endpoint;  // "host:port" other agents dial; empty when not serving
  std::chrono::milliseconds status_interval{1'000};
  std::chrono::seconds resync_period{300};
  std::string field_manager = "modelplane-node-agent";
};

class NodeController {
 public:
  struct Dependencies {
    core::KubeClient& client;
    const core::Watcher& watcher;
    CacheStore& store;
    const core::Logger& logger;
    const core::Clock& clock;
  };

  NodeController(Dependencies dependencies, NodeControllerOptions options);
  NodeController(const NodeController&) = delete;
  NodeController& operator=(const NodeController&) = delete;
  ~NodeController();

  // The stager is created by the caller with Poke as its on_change; set before Start.
  void SetStager(Stager* stager) { stager_ = stager; }
  // Starts the informers and, once they synced, the loop. False if `stop` fired first.
  [[nodiscard]] bool Start(core::CancellationToken& stop);
  void Stop();
  void Poke();

  // Peer endpoints of other nodes whose ModelCache status says the revision is Ready there.
  [[nodiscard]] std::vector<std::string> PeersHolding(const core::Sha256Bytes& digest) const;

 private:
  [[nodiscard]] core::Result<core::ReconcileResult> Reconcile();
  [[nodiscard]] core::Status EnsureCacheExists();
  [[nodiscard]] core::Status ApplyStatus(const nlohmann::json& status);

  const Dependencies dependencies_;
  const NodeControllerOptions options_;
  const core::Logger logger_;
  Stager* stager_ = nullptr;
  core::Informer caches_;
  core::Informer revisions_;
  core::Informer pods_;
  core::WorkQueue queue_;
  core::ControllerRunner runner_;

  // Loop state, touched only by the single reconcile worker.
  std::set<core::Sha256Bytes> staging_wanted_;
  nlohmann::json last_status_;
  nlohmann::json last_status_shape_;  // last_status_ without byte counts
  core::Clock::SteadyTime last_status_write_{};
};

}  // namespace modelplane::agent
