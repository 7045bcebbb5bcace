#include "operator/controllers/controller_metrics.h"

#include <chrono>

#include "core/metrics/histogram_buckets.h"

namespace modelplane::controller {

core::Result<ControllerMetrics> ControllerMetrics::Register(core::MetricsRegistry& registry) {
  auto reconciles =
      registry.AddCounter({.name = "modelplane_operator_reconcile_total",
                           .help = "Reconciles by controller and result (success, requeue, error).",
                           .label_names = {"controller", "result"}});
  if (!reconciles) return std::unexpected(reconciles.error());
  auto durations = registry.AddHistogram({.name = "modelplane_operator_reconcile_duration_seconds",
                                          .help = "Time one reconcile took, by controller.",
                                          .label_names = {"controller"}},
                                         core::DefaultSecondsBuckets());
  if (!durations) return std::unexpected(durations.error());
  auto phases =
      registry.AddGauge({.name = "modelplane_operator_revisions",
                         .help = "ModelRevisions by the phase the operator last gave them.",
                         .label_names = {"phase"}});
  if (!phases) return std::unexpected(phases.error());
  auto admission = AdmissionMetrics::Register(registry);
  if (!admission) return std::unexpected(admission.error());
  auto rollouts = RolloutMetrics::Register(registry);
  if (!rollouts) return std::unexpected(rollouts.error());
  return ControllerMetrics(*reconciles, *durations, *phases, *admission, std::move(*rollouts));
}

core::Reconciler ControllerMetrics::Instrument(const std::string& controller,
                                               core::Reconciler reconciler) const {
  auto success = reconciles_->WithLabels({controller, "success"});
  auto requeue = reconciles_->WithLabels({controller, "requeue"});
  auto error = reconciles_->WithLabels({controller, "error"});
  auto duration = durations_->WithLabels({controller});
  if (!success || !requeue || !error || !duration) return reconciler;  // label cap: never here
  return [reconciler = std::move(reconciler), success = *success, requeue = *requeue,
          error = *error, duration = *duration](const std::string& key) {
    const auto start = std::chrono::steady_clock::now();
    auto result = reconciler(key);
    duration.Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!result) {
      error.Increment();
    } else if (result->requeue_after) {
      requeue.Increment();
    } else {
      success.Increment();
    }
    return result;
  };
}

void ControllerMetrics::SetPhase(const std::string& key, const std::string& phase) {
  std::lock_guard lock(*phase_mutex_);
  auto& phase_by_key = *phase_by_key_;
  const auto old = phase_by_key.find(key);
  if (old != phase_by_key.end()) {
    if (old->second == phase) return;
    if (auto gauge = phases_->WithLabels({old->second})) gauge->Decrement();
    phase_by_key.erase(old);
  }
  if (phase.empty()) return;
  phase_by_key.emplace(key, phase);
  if (auto gauge = phases_->WithLabels({phase})) gauge->Increment();
}

}  // namespace modelplane::controller
