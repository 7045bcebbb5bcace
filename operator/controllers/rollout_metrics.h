// Gauges per rollout in progress, for the readiness-slope alert (ModelplaneRolloutReadinessLag,
// charts/modelplane/templates/prometheus-rules.yaml): a Deployment's or StatefulSet's replicas,
// how many of its pods of the new revision are Ready, when the rollout started and how many
// seconds after that the source's admission budget predicts its weights staged on the rollout's
// barrier (rollouts/rollout_readiness.h). Labels: namespace, kind, workload, revision; a
// rollout's series exist only while it runs, so their number is the rollouts in progress.
//
// A rollout starts when the ModelRevision controller first sees the workload wait for the
// revision's prestage (a rollout barrier), and ends when the workload is complete or names
// another revision. The start and the prediction are kept in memory: a new leader starts its
// rollouts' clocks afresh (the alert then fires later, never falsely). The prediction is made
// once, the first time the budget's rate is known, as the time since the start plus what the
// missing bytes take at that rate.
//
// Thread safety: every member may be called from any thread; Update serialises on a mutex.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/metrics/metrics_registry.h"

namespace modelplane::controller {

struct RolloutReadiness {
  std::string namespace_name;
  std::string kind;      // Deployment | StatefulSet
  std::string workload;  // its name
  std::int32_t replicas = 0;
  std::int32_t ready_replicas = 0;  // its pods naming the revision with Ready True
  // The workload waits for the revision's prestage now: only such a workload starts a rollout.
  bool barrier = false;
  // Seconds from now until the barrier holds the revision, by the budget; empty when unknown.
  std::optional<double> staging_seconds;
};

class RolloutMetrics {
 public:
  [[nodiscard]] static core::Result<std::unique_ptr<RolloutMetrics>> Register(
      core::MetricsRegistry& registry);

  // The workloads rolling to `revision_key` ("namespace/name") now, incomplete, as one pass
  // saw them; rollouts of it not listed are over and their series go. `now`: Unix seconds.
  void Update(const std::string& revision_key, const std::vector<RolloutReadiness>& rollouts,
              double now);

 private:
  struct Rollout {
    std::string namespace_name, kind, workload, revision;  // its series' labels
    double started = 0;
    std::optional<double> predicted;  // seconds after started
  };
  RolloutMetrics(core::GaugeFamily* replicas, core::GaugeFamily* ready, core::GaugeFamily* started,
                 core::GaugeFamily* predicted)
      : replicas_(replicas), ready_(ready), started_(started), predicted_(predicted) {}
  void RemoveSeries(const Rollout& rollout);

  core::GaugeFamily* replicas_;
  core::GaugeFamily* ready_;
  core::GaugeFamily* started_;
  core::GaugeFamily* predicted_;
  std::mutex mutex_;
  // By revision key, then "kind/workload" (the revision's namespace is theirs).
  std::map<std::string, std::map<std::string, Rollout>> rollouts_;
};

}  // namespace modelplane::controller
