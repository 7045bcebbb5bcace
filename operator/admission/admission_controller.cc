#include "operator/admission/admission_controller.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/api/limits.h"
#include "core/api/model_revision.h"
#include "core/api/model_revocation.h"
#include "core/api/object_key.h"
#include "core/api/source_identity.h"
#include "core/kube/resource_type.h"
#include "core/workqueue/run_concurrently.h"

namespace modelplane::controller {
namespace {

namespace api = core::api;
using nlohmann::json;

BudgetPhase PhaseFromName(std::string_view name) {
  if (name == "Holding") return BudgetPhase::kHolding;
  if (name == "Cut") return BudgetPhase::kCut;
  return BudgetPhase::kGrowing;
}

api::Timestamp WallStamp(core::Clock::WallTime time) {
  return std::chrono::time_point_cast<std::chrono::microseconds>(time);
}

// The tighter of two optional ceilings.
template <typename T>
std::optional<T> Tighter(std::optional<T> a, std::optional<T> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

// A revision as the passes keep it between versions: its sources, revocation and status digest
// and conditions. The file list (hundreds of shards in a large checkpoint), the per-node status
// and metadata the parser does not know (managedFields) would be kept for every revision and
// never read.
core::Result<api::ModelRevision> ParseRevisionForAdmission(const json& object) {
  auto revision = api::ModelRevisionFromJson(object);
  if (!revision) return revision;
  revision->metadata.unknown_fields = json::object();
  revision->spec.files = {};
  if (revision->status) {
    revision->status->nodes = {};
    revision->status->workloads = {};
  }
  return revision;
}

bool Invalid(const api::ModelRevision& revision) {
  if (!revision.status) return true;
  for (const api::Condition& condition : revision.status->conditions) {
    if (condition.type == "Valid" && condition.status == "False") return true;
  }
  return false;
}

// Same grants apart from their expiry.
bool SameGrants(const std::vector<api::StreamGrant>& a, const std::vector<api::StreamGrant>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t index = 0; index < a.size(); ++index) {
    if (a[index].source != b[index].source || a[index].streams != b[index].streams ||
        a[index].bytes_per_second != b[index].bytes_per_second) {
      return false;
    }
  }
  return true;
}

}  // namespace

api::SourceBudgetStatus BudgetStatusOf(const SourceBudget& budget) {
  return {.streams = budget.streams,
          .bytes_per_second = budget.bytes_per_second,
          .phase = std::string(BudgetPhaseName(budget.phase)),
          .reason = budget.last_reason.substr(0, api::kMaxShortString),
          .knee_streams = budget.knee_streams,
          .best_bytes_per_second = static_cast<std::int64_t>(budget.best_throughput),
          .best_streams = budget.best_streams,
          .per_stream_bytes_per_second = static_cast<std::int64_t>(budget.per_stream),
          .best_ttfb_milliseconds =
              static_cast<std::int64_t>(std::llround(budget.best_ttfb_seconds * 1000.0)),
          .steps_at_knee = budget.steps_at_knee};
}

SourceBudget BudgetFromStatus(const api::SourceBudgetStatus& status) {
  SourceBudget budget;
  budget.streams = std::max(1, status.streams);
  budget.bytes_per_second = status.bytes_per_second;
  budget.phase = PhaseFromName(status.phase);
  budget.knee_streams = status.knee_streams;
  budget.best_throughput = static_cast<double>(status.best_bytes_per_second);
  budget.best_streams = status.best_streams;
  budget.per_stream = static_cast<double>(status.per_stream_bytes_per_second);
  budget.best_ttfb_seconds = static_cast<double>(status.best_ttfb_milliseconds) / 1000.0;
  budget.steps_at_knee = status.steps_at_knee;
  budget.last_reason = "resumed: " + status.reason;
  return budget;
}

AdmissionController::AdmissionController(Dependencies dependencies, AdmissionOptions options)
    : dependencies_(dependencies),
      options_(options),
      logger_(dependencies.logger.WithComponent("operator.admission")),
      parsed_revisions_(ParseRevisionForAdmission) {}

AdmissionController::~AdmissionController() {
  Stop();
}

void AdmissionController::Start() {
  LoadBudgets();
  thread_ = std::jthread([this](const std::stop_token& stop) { Loop(stop); });
}

void AdmissionController::Stop() {
  stop_.Cancel();
  if (thread_.joinable()) thread_.join();
}

void AdmissionController::Loop(const std::stop_token& stop) {
  while (!stop.stop_requested() && !stop_.cancelled()) {
    RunPass();
    if (!stop_.SleepFor(dependencies_.clock, options_.interval)) return;
  }
}

void AdmissionController::LoadBudgets() {
  auto page = dependencies_.client.ListAll(core::resources::SourceBudgets(), "", {});
  if (!page) {
    logger_.Warn("source_budgets_not_loaded",
                 {{"error", page.error().ToString()}, {"action", "start every budget small"}});
    return;
  }
  for (const json& item : page->items) {
    auto object = api::SourceBudgetFromJson(item);
    if (!object) {
      logger_.Warn("source_budget_unreadable", {{"error", object.error().ToString()}});
      continue;
    }
    Budget& budget = budgets_[object->spec.source];
    budget.exists = true;
    budget.ceiling = {.max_streams = object->spec.max_streams,
                      .max_bytes_per_second = object->spec.max_bytes_per_second};
    if (object->status) {
      budget.rule = BudgetFromStatus(*object->status);
      budget.written = *object->status;
    } else {
      budget.rule = InitialBudget(budget.ceiling);
    }
  }
  logger_.Info("source_budgets_loaded", {{"budgets", budgets_.size()}});
}

std::set<std::string> AdmissionController::Stalled(
    const CacheSnapshots& caches, const std::map<std::string, RevisionSources>& revisions) {
  const auto now = dependencies_.clock.Now();
  std::map<std::string, Progress> seen;
  std::set<std::string> stalled;
  for (const auto& snapshot : caches) {
    const api::ModelCache& cache = *snapshot;
    for (const api::DesiredRevision& desired : cache.spec.revisions) {
      const auto revision =
          revisions.find(api::ObjectKey(desired.revision.namespace_name, desired.revision.name));
      if (revision == revisions.end()) continue;
      std::int64_t bytes = 0;
      if (cache.status) {
        for (const api::CachedRevision& entry : cache.status->revisions) {
          if (entry.digest == revision->second.digest) bytes = entry.bytes_done;
        }
      }
      const std::string key = StagingKey(cache.metadata.name, revision->second.digest);
      Progress progress = progress_.contains(key) ? progress_[key] : Progress{};
      if (progress.bytes_done != bytes) progress = {.bytes_done = bytes, .since = now};
      if (now - progress.since > options_.seeder_stall_timeout) stalled.insert(key);
      seen[key] = progress;
    }
  }
  progress_ = std::move(seen);
  return stalled;
}

void AdmissionController::RunPass() {
  const std::vector<core::ObjectPtr> cache_objects = dependencies_.caches.store().List();
  CacheSnapshots caches;
  caches.reserve(cache_objects.size());
  for (const core::ObjectPtr& object : cache_objects) {
    if (auto cache = dependencies_.parsed_caches.Get(object); *cache) {
      // Shares the parse's lifetime: the store may replace the object while this pass runs.
      const api::ModelCache* parsed = &**cache;
      caches.emplace_back(std::move(cache), parsed);
    }
  }
  std::map<std::string, RevisionSources> revisions;
  std::map<std::string, SourceCeiling> ceilings;
  for (const core::ObjectPtr& object : dependencies_.revisions.store().List()) {
    const auto parsed = parsed_revisions_.Get(object);
    if (!*parsed) continue;
    const api::ModelRevision& revision = **parsed;
    if (core::api::IsRevoked(revision) || Invalid(revision) || revision.status->digest.empty()) {
      continue;
    }
    RevisionSources sources{.digest = revision.status->digest};
    for (const api::ModelSource& source : revision.spec.sources) {
      const std::string identity = api::SourceIdentity(source);
      sources.identities.push_back(identity);
      SourceCeiling& ceiling = ceilings[identity];
      if (source.capacity) {
        ceiling.max_streams = Tighter(ceiling.max_streams, source.capacity->max_concurrent_fetches);
        ceiling.max_bytes_per_second =
            Tighter(ceiling.max_bytes_per_second, source.capacity->max_bytes_per_second);
      }
    }
    revisions[api::ObjectKey(revision.metadata.namespace_name, revision.metadata.name)] =
        std::move(sources);
  }
  std::set<std::string> stalled = Stalled(caches, revisions);
  const FleetPlanInput input{.caches = std::move(caches),
                             .revisions = std::move(revisions),
                             .seeders = seeders_,
                             .stalled = std::move(stalled),
                             .wanted_streams = options_.wanted_streams};
  FleetPlan plan = PlanFleet(input);
  for (const auto& [group, node] : plan.seeders) {
    auto before = seeders_.find(group);
    if (before == seeders_.end() || before->second != node) {
      logger_.Info("seeder_chosen", {{"group", group},
                                     {"node", node},
                                     {"replaced", before == seeders_.end() ? "" : before->second}});
      // A new seeder's stall clock starts now: it has had no grant to make progress with, and
      // judged by the time it waited as a follower it would be replaced at once, again and
      // again, each successor reading the origin too.
      const std::string_view digest = std::string_view(group).substr(group.find('|') + 1);
      progress_[StagingKey(node, digest)].since = dependencies_.clock.Now();
    }
  }
  seeders_ = plan.seeders;
  // Every source someone needs has a budget from the first pass that sees it, stepped or not.
  for (const auto& [node, identities] : plan.node_sources) {
    for (const std::string& identity : identities) {
      auto [found, created] = budgets_.try_emplace(identity);
      if (auto ceiling = ceilings.find(identity); ceiling != ceilings.end()) {
        found->second.ceiling = ceiling->second;
      }
      if (created) found->second.rule = InitialBudget(found->second.ceiling);
    }
  }
  const auto now = dependencies_.clock.Now();
  if (!next_step_ || now >= *next_step_) {
    StepBudgets(input.caches, plan);
    next_step_ = now + options_.step_interval;
  }
  WriteGrants(input.caches, plan);
}

void AdmissionController::StepBudgets(const CacheSnapshots& caches, const FleetPlan& plan) {
  const auto wall_now = dependencies_.clock.WallNow();
  const api::Timestamp newer_than = WallStamp(wall_now - 2 * options_.step_interval);
  for (auto& [identity, budget] : budgets_) {
    const SourceObservation observation = ObserveSource(caches, identity, newer_than);
    const std::int64_t requests =
        observation.requests_ok + observation.throttled + observation.errors + observation.timeouts;
    const bool active = plan.demands.contains(identity) || requests > 0;
    bool cut = false;
    if (active) {
      const SourceBudget next = StepBudget(budget.rule, observation, budget.ceiling);
      cut = next.phase == BudgetPhase::kCut && next.last_reason.starts_with("cut");
      if (next.streams != budget.rule.streams) {
        logger_.Info("source_budget_stepped", {{"source", identity},
                                               {"streams", next.streams},
                                               {"was", budget.rule.streams},
                                               {"bytes_per_second", observation.bytes_per_second},
                                               {"reason", next.last_reason}});
      }
      budget.rule = next;
    }
    if (dependencies_.rates != nullptr) {
      dependencies_.rates->Set(identity, BudgetBytesPerSecond(budget.rule));
    }
    budget.last_observed = static_cast<std::int64_t>(observation.bytes_per_second);
    api::SourceBudgetStatus status = BudgetStatusOf(budget.rule);
    status.observed_bytes_per_second = budget.last_observed;
    status.observed_streams = observation.streams_in_use;
    status.throttled_requests = observation.throttled;
    status.failed_requests = observation.errors + observation.timeouts;
    status.granted_streams = budget.granted;
    status.waiting_stagings = budget.waiting;
    // The step time alone changing is not worth a write.
    status.last_step_time = budget.written.last_step_time;
    if (!budget.exists || status != budget.written) {
      status.last_step_time = WallStamp(wall_now);
      budget.written = status;
      WriteBudget(identity, budget);
    }
    if (dependencies_.metrics != nullptr) {
      dependencies_.metrics->Record(identity,
                                    {.budget_streams = budget.rule.streams,
                                     .observed_bytes_per_second = observation.bytes_per_second,
                                     .granted_streams = budget.granted,
                                     .waiting_stagings = budget.waiting,
                                     .throttled_requests = observation.throttled,
                                     .cut = cut});
    }
  }
}

void AdmissionController::WriteBudget(const std::string& identity, Budget& budget) {
  const std::string name = api::SourceBudgetName(identity);
  const api::SourceBudgetSpec spec{.source = identity,
                                   .max_streams = budget.ceiling.max_streams,
                                   .max_bytes_per_second = budget.ceiling.max_bytes_per_second};
  const json object = {{"apiVersion", api::kApiVersion},
                       {"kind", api::kSourceBudgetKind},
                       {"metadata", {{"name", name}}},
                       {"spec", api::ToJson(spec)}};
  auto applied = dependencies_.client.Patch(
      core::resources::SourceBudgets(), "", name, core::PatchType::kApply, object,
      {.field_manager = std::string(kAdmissionFieldManager), .force = true});
  if (!applied) {
    logger_.Warn("source_budget_write_failed",
                 {{"source", identity}, {"error", applied.error().ToString()}});
    return;
  }
  budget.exists = true;
  json status_object = object;
  status_object.erase("spec");
  status_object["status"] = api::ToJson(budget.written);
  auto status = dependencies_.client.Patch(core::resources::SourceBudgets(), "", name,
                                           core::PatchType::kApply, status_object,
                                           {.field_manager = std::string(kAdmissionFieldManager),
                                            .force = true,
                                            .subresource = "status"});
  if (!status) {
    logger_.Warn("source_budget_status_write_failed",
                 {{"source", identity}, {"error", status.error().ToString()}});
    budget.written = {};  // written again at the next step
  }
}

void AdmissionController::WriteGrants(const CacheSnapshots& caches, const FleetPlan& plan) {
  const auto wall_now = dependencies_.clock.WallNow();
  const api::Timestamp expires = WallStamp(wall_now + options_.grant_ttl);
  const api::Timestamp renew_before = WallStamp(wall_now + options_.grant_ttl / 2);
  // Streams and byte rate per node and source.
  std::map<std::string, std::map<std::string, api::StreamGrant>> by_node;
  for (const auto& [node, identities] : plan.node_sources) {
    for (const std::string& identity : identities) {
      by_node[node][identity] = {.source = identity, .streams = 0, .expires_at = expires};
    }
  }
  for (auto& [identity, budget] : budgets_) {
    const auto demands = plan.demands.find(identity);
    const auto followers = plan.followers.find(identity);
    budget.granted = 0;
    budget.waiting = followers != plan.followers.end() ? followers->second : 0;
    if (demands == plan.demands.end()) continue;
    const auto grants =
        AllocateGrants(budget.rule.streams, budget.rule.bytes_per_second, demands->second);
    for (const StagingGrant& grant : grants) {
      api::StreamGrant& entry = by_node[grant.node][identity];
      entry.source = identity;
      entry.expires_at = expires;
      entry.streams += grant.streams;
      if (grant.bytes_per_second) {
        entry.bytes_per_second = entry.bytes_per_second.value_or(0) + *grant.bytes_per_second;
      }
      budget.granted += grant.streams;
      if (grant.streams == 0) ++budget.waiting;
    }
  }
  // The nodes that read the origin first: on a slow API server, the seeders should not wait
  // behind a dozen followers' zero grants.
  std::vector<const api::ModelCache*> order;
  order.reserve(caches.size());
  for (const auto& cache : caches) order.push_back(cache.get());
  const auto streams_of = [&](const api::ModelCache* cache) {
    int streams = 0;
    if (auto node = by_node.find(cache->metadata.name); node != by_node.end()) {
      for (const auto& [identity, grant] : node->second) streams += grant.streams;
    }
    return streams;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](const auto* a, const auto* b) { return streams_of(a) > streams_of(b); });
  struct Write {
    const api::ModelCache* cache;
    std::vector<api::StreamGrant> desired;
  };
  std::vector<Write> writes;
  for (const api::ModelCache* cache : order) {
    std::vector<api::StreamGrant> desired;
    if (auto node = by_node.find(cache->metadata.name); node != by_node.end()) {
      for (auto& [identity, grant] : node->second) desired.push_back(grant);
    }
    const std::vector<api::StreamGrant>& current = cache->spec.grants;
    const bool fresh =
        std::all_of(current.begin(), current.end(),
                    [&](const api::StreamGrant& grant) { return grant.expires_at > renew_before; });
    if (SameGrants(desired, current) && (fresh || desired.empty())) continue;
    writes.push_back({cache, std::move(desired)});
  }
  // Several at once, seeders first: a follower whose zero grant comes after its agent's start
  // grace reads the origin at the safe capacity instead of waiting for its peers.
  core::RunConcurrently(writes.size(), core::kConcurrentApiWrites, [&](std::size_t index) {
    const api::ModelCache& cache = *writes[index].cache;
    const std::vector<api::StreamGrant>& desired = writes[index].desired;
    const json patch = {{"apiVersion", api::kApiVersion},
                        {"kind", api::kModelCacheKind},
                        {"metadata", {{"name", cache.metadata.name}}},
                        {"spec", {{"grants", api::GrantsToJson(desired)}}}};
    auto applied = dependencies_.client.Patch(
        core::resources::ModelCaches(), "", cache.metadata.name, core::PatchType::kApply, patch,
        {.field_manager = std::string(kAdmissionFieldManager), .force = true});
    if (!applied) {
      logger_.Warn("grants_write_failed",
                   {{"node", cache.metadata.name}, {"error", applied.error().ToString()}});
      return;
    }
    if (dependencies_.latest_caches != nullptr) dependencies_.latest_caches->Remember(*applied);
    if (!SameGrants(desired, cache.spec.grants)) {
      std::string summary;
      for (const api::StreamGrant& grant : desired) {
        summary += fmt::format("{}{}={}", summary.empty() ? "" : ",", grant.source, grant.streams);
      }
      logger_.Info("grants_written", {{"node", cache.metadata.name}, {"grants", summary}});
    }
  });
}

}  // namespace modelplane::controller
