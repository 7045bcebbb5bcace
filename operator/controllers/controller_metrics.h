// The operator's controller metrics: reconcile outcomes and durations per controller, and how
// many ModelRevisions are in each phase. Registered once per process (the registry refuses a
// second registration), shared by every controller instance that process starts.
// Thread safety: handles update atomically; PhaseTracker serialises on its own mutex.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "core/metrics/metrics_registry.h"
#include "core/workqueue/controller_runner.h"
#include "operator/admission/admission_metrics.h"

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

 private:
  ControllerMetrics(core::CounterFamily* reconciles, core::HistogramFamily* durations,
                    core::GaugeFamily* phases, AdmissionMetrics admission)
      : reconciles_(reconciles), durations_(durations), phases_(phases), admission_(admission) {}

  core::CounterFamily* reconciles_;
  core::HistogramFamily* durations_;
  core::GaugeFamily* phases_;
  AdmissionMetrics admission_;
  std::shared_ptr<std::mutex> phase_mutex_ = std::make_shared<std::mutex>();
  std::shared_ptr<std::map<std::string, std::string>> phase_by_key_ =
      std::make_shared<std::map<std::string, std::string>>();
};

}  // namespace modelplane::controller
