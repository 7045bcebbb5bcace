#include "operator/controllers/revision_rollouts.h"

#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/api/duration.h"
#include "core/api/model_cache.h"
#include "core/api/object_key.h"
#include "core/api/source_identity.h"
#include "operator/controllers/cache_entries.h"
#include "operator/gating/serving_pods.h"
#include "operator/rollouts/rollout_readiness.h"

namespace modelplane::controller {
namespace {

namespace api = core::api;
using nlohmann::json;

std::chrono::seconds RollbackWindow(const api::ModelRevisionSpec& spec) {
  if (!spec.retention || spec.retention->rollback_window.empty()) return kDefaultRollbackWindow;
  // Validation already refused a window that does not parse.
  return api::ParseDuration(spec.retention->rollback_window).value_or(kDefaultRollbackWindow);
}

// The rate of the first of the revision's sources whose admission budget has one: the source
// its stagings read first.
std::optional<double> BudgetRate(const SourceRates* rates, const api::ModelRevisionSpec& spec) {
  if (rates == nullptr) return std::nullopt;
  for (const api::ModelSource& source : spec.sources) {
    if (auto rate = rates->BytesPerSecond(api::SourceIdentity(source))) return rate;
  }
  return std::nullopt;
}

RolloutReadiness Readiness(const WorkloadPods& entry, const std::string& revision,
                           std::int64_t total_bytes, const std::vector<PrestageCandidate>& caches,
                           const std::map<std::string, std::int64_t>& held_bytes,
                           const RolloutBarrier* barrier, std::optional<double> rate) {
  RolloutReadiness readiness{.namespace_name = entry.workload.namespace_name,
                             .kind = entry.workload.kind,
                             .workload = entry.workload.name,
                             .replicas = entry.workload.replicas,
                             .barrier = barrier != nullptr};
  for (const WorkloadPod& pod : entry.pods) {
    if (pod.revision == revision && pod.ready) ++readiness.ready_replicas;
  }
  if (barrier == nullptr) return readiness;
  std::vector<BarrierNodeBytes> nodes;
  for (const std::string& node : barrier->nodes) {
    BarrierNodeBytes bytes{.missing_bytes = total_bytes};
    if (auto held = held_bytes.find(node); held != held_bytes.end()) {
      bytes.missing_bytes = std::max<std::int64_t>(0, total_bytes - held->second);
    }
    for (const PrestageCandidate& cache : caches) {
      if (cache.name != node) continue;
      if (auto zone = cache.labels.find(std::string(kZoneLabel)); zone != cache.labels.end()) {
        bytes.zone = zone->second;
      }
    }
    nodes.push_back(std::move(bytes));
  }
  readiness.staging_seconds = PredictStagingSeconds(nodes, rate);
  return readiness;
}

}  // namespace

RevisionRolloutPlan RevisionRollouts::Plan(const std::string& revision_key,
                                           const api::ModelRevision& revision,
                                           std::int64_t total_bytes,
                                           const std::vector<PrestageCandidate>& caches,
                                           const std::string& digest) {
  RevisionRolloutPlan out;
  const std::vector<api::WorkloadUse> previous =
      revision.status ? revision.status->workloads : std::vector<api::WorkloadUse>{};
  RolloutPlanRequest request{
      .revision = revision.metadata.name,
      .total_bytes = total_bytes,
      .rollback_window = RollbackWindow(revision.spec),
      .now = std::chrono::floor<std::chrono::seconds>(context_.clock.WallNow()),
      .workloads = context_.workloads.ForRevision(revision_key, previous),
      .caches = caches};
  std::map<std::string, std::int64_t> held_bytes;  // by node: what it holds or staged of it
  for (const core::ObjectPtr& cache_object : context_.caches.store().List()) {
    const auto cache = context_.parsed_caches.Get(cache_object);
    if (!*cache || !(*cache)->status) continue;
    for (const api::CachedRevision& entry : (*cache)->status->revisions) {
      if (entry.digest != digest) continue;
      if (entry.state == api::kCacheStateFailed)
        request.failed_nodes.insert((*cache)->metadata.name);
      held_bytes[(*cache)->metadata.name] =
          entry.state == api::kCacheStateReady ? total_bytes : entry.bytes_done;
    }
  }
  // Where the revisions these workloads roll between are kept for pods or for undo now.
  std::set<std::string> names = {revision.metadata.name};
  for (const WorkloadPods& entry : request.workloads)
    names.insert(entry.workload.previous_revision);
  const std::string ns = revision.metadata.namespace_name;
  for (const std::string& name : names) {
    if (name.empty()) continue;
    for (const core::ObjectPtr& cache_object :
         context_.caches.store().ByIndex(kCachesByRevision, core::api::ObjectKey(ns, name))) {
      const auto cache = context_.parsed_caches.Get(cache_object);
      if (!*cache) continue;
      for (const api::DesiredRevision& entry : (*cache)->spec.revisions) {
        if (entry.revision.namespace_name == ns && entry.revision.name == name &&
            (entry.reason == api::kReasonInUse || entry.reason == api::kReasonRollback)) {
          request.serving_nodes[name].insert((*cache)->metadata.name);
        }
      }
    }
  }
  out.plan = PlanRollouts(request);
  const std::optional<double> rate = BudgetRate(context_.source_rates, revision.spec);
  for (const WorkloadPods& entry : request.workloads) {
    const std::string key = entry.workload.Key();
    out.workloads.emplace(key, entry.workload);
    const auto barrier = out.plan.barriers.find(key);
    if (entry.workload.current_revision == revision.metadata.name && !entry.workload.complete) {
      out.readiness.push_back(
          Readiness(entry, revision.metadata.name, total_bytes, caches, held_bytes,
                    barrier == out.plan.barriers.end() ? nullptr : &barrier->second, rate));
    }
    if (barrier == out.plan.barriers.end() || barrier->second.met) continue;
    for (const WorkloadPod& pod : entry.pods) {
      if (pod.revision == revision.metadata.name) out.held_pods[pod.uid] = barrier->second.message;
    }
  }
  return out;
}

void RevisionRollouts::Report(const std::string& revision_key,
                              const RevisionRolloutPlan& rollouts) {
  for (const auto& [key, barrier] : rollouts.plan.barriers) {
    const auto workload = rollouts.workloads.find(key);
    if (workload == rollouts.workloads.end()) continue;
    const Workload& subject = workload->second;
    const json regarding = {
        {"apiVersion", "apps/v1"},
        {"kind", subject.kind},
        {"metadata",
         {{"name", subject.name}, {"namespace", subject.namespace_name}, {"uid", subject.uid}}}};
    const bool news = reporter_.Report(regarding, "Normal",
                                       barrier.met ? "WeightsPrestaged" : "PrestagingWeights",
                                       "Rollout", barrier.message);
    if (news && barrier.met) {
      context_.logger.Info("rollout_prestaged",
                           {{"workload", key},
                            {"revision", revision_key},
                            {"nodes", fmt::format("{}", fmt::join(barrier.nodes, ","))}});
    }
  }
}

}  // namespace modelplane::controller
