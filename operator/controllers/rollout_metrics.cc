#include "operator/controllers/rollout_metrics.h"

#include <string_view>

namespace modelplane::controller {
namespace {

// Rollouts in progress at once, all namespaces: far above any real fleet, and a bound.
constexpr std::size_t kMaxRollouts = 2000;

std::string_view RevisionName(std::string_view key) {
  const auto slash = key.find('/');
  return slash == std::string_view::npos ? key : key.substr(slash + 1);
}

}  // namespace

core::Result<std::unique_ptr<RolloutMetrics>> RolloutMetrics::Register(
    core::MetricsRegistry& registry) {
  const std::vector<std::string> labels = {"namespace", "kind", "workload", "revision"};
  auto gauge = [&](std::string name, std::string help) {
    return registry.AddGauge({.name = std::move(name),
                              .help = std::move(help),
                              .label_names = labels,
                              .max_children = kMaxRollouts});
  };
  auto replicas = gauge("modelplane_rollout_replicas",
                        "Replicas of a Deployment or StatefulSet rolling to a ModelRevision.");
  auto ready = gauge("modelplane_rollout_ready_replicas",
                     "Pods of a rolling workload that name its new ModelRevision and are Ready.");
  auto started = gauge("modelplane_rollout_start_time_seconds",
                       "Unix time the operator saw the rollout start waiting for its prestage.");
  auto predicted =
      gauge("modelplane_rollout_predicted_ready_seconds",
            "Seconds after the rollout's start by which its source's admission budget predicts the "
            "revision staged where the workload runs; absent until the budget has a rate.");
  for (const auto* family : {&replicas, &ready, &started, &predicted}) {
    if (!*family) return std::unexpected(family->error());
  }
  return std::unique_ptr<RolloutMetrics>(
      new RolloutMetrics(*replicas, *ready, *started, *predicted));
}

void RolloutMetrics::Update(const std::string& revision_key,
                            const std::vector<RolloutReadiness>& rollouts, double now) {
  const std::lock_guard lock(mutex_);
  std::map<std::string, Rollout>& before = rollouts_[revision_key];
  std::map<std::string, Rollout> after;
  for (const RolloutReadiness& seen : rollouts) {
    const std::string key = seen.kind + "/" + seen.workload;
    Rollout rollout;
    if (auto known = before.find(key); known != before.end()) {
      rollout = known->second;
    } else if (seen.barrier) {
      rollout = {.namespace_name = seen.namespace_name,
                 .kind = seen.kind,
                 .workload = seen.workload,
                 .revision = std::string(RevisionName(revision_key)),
                 .started = now};
    } else {
      continue;  // pods rolling without waiting for weights: not a model rollout
    }
    if (!rollout.predicted && seen.staging_seconds) {
      rollout.predicted = (now - rollout.started) + *seen.staging_seconds;
    }
    const std::initializer_list<std::string_view> labels = {rollout.namespace_name, rollout.kind,
                                                            rollout.workload, rollout.revision};
    auto replicas = replicas_->WithLabels(labels);
    auto ready = ready_->WithLabels(labels);
    auto started = started_->WithLabels(labels);
    if (!replicas || !ready || !started) continue;  // over kMaxRollouts: not shown
    replicas->Set(seen.replicas);
    ready->Set(seen.ready_replicas);
    started->Set(rollout.started);
    if (rollout.predicted) {
      if (auto predicted = predicted_->WithLabels(labels)) predicted->Set(*rollout.predicted);
    }
    after.emplace(key, std::move(rollout));
  }
  for (const auto& [key, rollout] : before) {
    if (!after.contains(key)) RemoveSeries(rollout);
  }
  if (after.empty()) {
    rollouts_.erase(revision_key);
  } else {
    before = std::move(after);
  }
}

void RolloutMetrics::RemoveSeries(const Rollout& rollout) {
  const std::initializer_list<std::string_view> labels = {rollout.namespace_name, rollout.kind,
                                                          rollout.workload, rollout.revision};
  for (core::GaugeFamily* family : {replicas_, ready_, started_, predicted_}) {
    family->Remove(labels);
  }
}

}  // namespace modelplane::controller
