// The operator's controller metrics: reconcile outcomes and durations per controller, how
// many ModelRevisions are in each phase, and the rollouts in progress (rollout_metrics.h).
// Registered once per process (the registry refuses a second registration), shared by every
// controller instance that process starts. Thread safety: handles update atomically; PhaseTracker
// serialises on its own mutex.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/metrics/metrics_registry.h"
#include "core/workqueue/controller_runner.h"
#include "operator/admission/admission_metrics.h"
#include "operator/controllers/rollout_metrics.h"

namespace modelplane::controller {

class ControllerMetrics {
 public:
  [[nodiscard]] static core::Result<ControllerMetrics> Register(core::MetricsRegistry& registry);

  // Wraps a reconciler so each call counts as success, requeue or error and is timed.
  [[nodiscard]] core::Reconciler Instrument(const std::string& controller,
                                            core::Reconciler reconciler) const;

  // Keeps modelplane_operator_revisions{phase} equal to the phases last reconciled; an empty
  // phase forgets the key (the revision is gone).
  void SetPhase(const std::string& key, const std::string& phase);

  [[nodiscard]] const AdmissionMetrics& admission() const { return admission_; }
  [[nodiscard]] RolloutMetrics& rollouts() const { return *rollouts_; }

 private:
  ControllerMetrics(core::CounterFamily* reconciles, core::HistogramFamily* durations,
                    core::GaugeFamily* phases, AdmissionMetrics admission,
                    std::shared_ptr<RolloutMetrics> rollouts)
      : reconciles_(reconciles),
        durations_(durations),
        phases_(phases),
        admission_(admission),
        rollouts_(std::move(rollouts)) {}

  core::CounterFamily* reconciles_;
  core::HistogramFamily* durations_;
  core::GaugeFamily* phases_;
  AdmissionMetrics admission_;
  std::shared_ptr<RolloutMetrics> rollouts_;  // shared by the copies, like the phase map
  std::shared_ptr<std::mutex> phase_mutex_ = std::make_shared<std::mutex>();
  std::shared_ptr<std::map<std::string, std::string>> phase_by_key_ =
      std::make_shared<std::map<std::string, std::string>>();
};

}  // namespace modelplane::controller
