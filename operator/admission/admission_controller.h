// The admission controller: turns each remote source's learned budget into grants, so the
// fleet's cold fetches run only as fast as the source can take them. Runs on the leader, one
// pass every `interval`:
//   1. reads every ModelCache (what nodes want, hold and measured) and ModelRevision (digests,
//      sources, capacity hints) from the operator's informers;
//   2. plans who reads which source (fleet_plan.h: demand, one seeder per zone and revision);
//   3. every `step_interval`, steps each source's budget (source_budget.h) with the fleet's
//      telemetry and keeps it in that source's SourceBudget status, from which a new leader
//      resumes;
//   4. shares each budget among the seeders' stagings (grant_allocator.h) and writes each
//      node's grants into its ModelCache spec.grants (its own field manager), renewed before
//      they expire; followers get 0 streams.
// Agents enforce the grants (node-agent/fetch/source_admission.h); when this controller stops
// (the leader died) the grants lapse after `grant_ttl` and agents fall back to their small safe
// capacity until a new leader grants again.
//
// Thread safety: Start and Stop from the owning thread; the pass runs on its own thread.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "core/api/source_budget.h"
#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/kube/informer.h"
#include "core/kube/kube_client.h"
#include "core/kube/latest_objects.h"
#include "core/kube/parsed_objects.h"
#include "core/log/logger.h"
#include "operator/admission/admission_metrics.h"
#include "operator/admission/admission_options.h"
#include "operator/admission/fleet_plan.h"
#include "operator/admission/source_budget.h"
#include "operator/admission/source_rates.h"

namespace modelplane::controller {

inline constexpr std::string_view kAdmissionFieldManager = "modelplane-admission";

class AdmissionController {
 public:
  struct Dependencies {
    core::KubeClient& client;
    const core::Informer& caches;
    const core::Informer& revisions;
    // `caches`' objects parsed once each, shared with the controllers.
    core::ParsedObjects<core::api::ModelCache>& parsed_caches;
    const core::Logger& logger;
    const core::Clock& clock;
    const AdmissionMetrics* metrics = nullptr;
    SourceRates* rates = nullptr;  // each budget's byte rate, for rollouts' predictions
    // The controllers' newest ModelCache copies: the answers to grant writes go there, so an
    // entry write right after one does not start from the version before it. Null: not kept.
    core::LatestObjects* latest_caches = nullptr;
  };

  AdmissionController(Dependencies dependencies, AdmissionOptions options);
  AdmissionController(const AdmissionController&) = delete;
  AdmissionController& operator=(const AdmissionController&) = delete;
  ~AdmissionController();  // Stop()

  // Loads the SourceBudgets a previous leader kept, then starts the passes.
  void Start();
  void Stop();

  // One pass, for tests that drive time themselves.
  void RunPass();

 private:
  struct Progress {
    std::int64_t bytes_done = -1;
    core::Clock::SteadyTime since{};
  };
  struct Budget {
    SourceBudget rule;
    SourceCeiling ceiling;
    core::api::SourceBudgetStatus written;  // what its SourceBudget status holds
    bool exists = false;                    // the object was created
    std::int64_t last_observed = 0;
    int granted = 0;
    int waiting = 0;
  };

  void LoadBudgets();
  void Loop(const std::stop_token& stop);
  [[nodiscard]] std::set<std::string> Stalled(
      const CacheSnapshots& caches, const std::map<std::string, RevisionSources>& revisions);
  void StepBudgets(const CacheSnapshots& caches, const FleetPlan& plan);
  void WriteBudget(const std::string& identity, Budget& budget);
  void WriteGrants(const CacheSnapshots& caches, const FleetPlan& plan);

  const Dependencies dependencies_;
  const AdmissionOptions options_;
  const core::Logger logger_;
  // `revisions`' objects parsed once each (a pass reads every one of them every interval),
  // without the parts a pass does not read (ParseRevisionForAdmission).
  core::ParsedObjects<core::api::ModelRevision> parsed_revisions_;
  std::map<std::string, Budget> budgets_;       // by source identity
  std::map<std::string, std::string> seeders_;  // the last plan's
  std::map<std::string, Progress> progress_;    // "node|digest"
  std::optional<core::Clock::SteadyTime> next_step_;
  core::CancellationToken stop_;
  std::jthread thread_;
};

// The rule's state as a SourceBudget status, and back.
[[nodiscard]] core::api::SourceBudgetStatus BudgetStatusOf(const SourceBudget& budget);
[[nodiscard]] SourceBudget BudgetFromStatus(const core::api::SourceBudgetStatus& status);

}  // namespace modelplane::controller
