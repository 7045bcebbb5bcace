#include "kubectl-plugin/rollout_forecast.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "core/api/model_revocation.h"
#include "core/api/object_key.h"
#include "core/api/source_budget.h"
#include "core/api/source_identity.h"
#include "core/json/json_lookup.h"
#include "operator/admission/admission_controller.h"

namespace modelplane::cli {

namespace api = core::api;
using simulation::NodeModel;
using simulation::OriginModel;

namespace {

core::Result<simulation::OriginKind> OriginKindOf(const api::ModelSource& source) {
  if (source.type == api::kSourceObjectStore) return simulation::OriginKind::kObjectStore;
  // A hub serves ranged GETs over HTTPS from its CDN: modelled as an HTTP origin.
  if (source.type == api::kSourceHttp || source.type == api::kSourceHuggingFace ||
      source.type == api::kSourceModelScope) {
    return simulation::OriginKind::kHttp;
  }
  if (source.type == api::kSourceSharedFilesystem) {
    return simulation::OriginKind::kSharedFilesystem;
  }
  return core::MakeError(core::ErrorCode::kInvalidArgument,
                         fmt::format("source {} has type \"{}\", which the simulator does not know",
                                     source.name, source.type));
}

// SourceBudget statuses by source identity; the ones that do not parse become problems.
std::map<std::string, api::SourceBudgetStatus> LearnedBudgets(const ObjectListing& budgets,
                                                              std::vector<std::string>& problems) {
  std::map<std::string, api::SourceBudgetStatus> learned;
  if (budgets.unavailable) {
    problems.push_back("SourceBudgets could not be listed: " + *budgets.unavailable);
  }
  for (const nlohmann::json& item : budgets.items) {
    auto budget = api::SourceBudgetFromJson(item);
    if (!budget) {
      const std::string name = core::StringMember(item, {"metadata", "name"});
      problems.push_back(
          fmt::format("SourceBudget {}: {}", name.empty() ? "?" : name, budget.error().message()));
      continue;
    }
    if (budget->status) learned[budget->spec.source] = *budget->status;
  }
  return learned;
}

struct ChosenRate {
  double bytes_per_second = 0;
  RateBasis basis = RateBasis::kAssumed;
};

// A flag wins; else what the fleet measured (> 0); else the simulator's default for a source
// nobody measured.
ChosenRate ChooseRate(const std::optional<double>& flag, std::int64_t measured, double assumed) {
  if (flag) return {*flag, RateBasis::kFlag};
  if (measured > 0) return {static_cast<double>(measured), RateBasis::kMeasured};
  return {assumed, RateBasis::kAssumed};
}

core::Status AddOrigins(const api::ModelRevisionSpec& spec, const ObjectListing& budgets,
                        const ForecastFlags& flags, RolloutPlan& plan) {
  const std::map<std::string, api::SourceBudgetStatus> learned =
      LearnedBudgets(budgets, plan.problems);
  for (const api::ModelSource& source : spec.sources) {
    auto kind = OriginKindOf(source);
    if (!kind) return std::unexpected(kind.error());
    OriginModel origin{.identity = api::SourceIdentity(source), .kind = *kind};
    OriginBasis basis{.source_name = source.name};
    const auto found = learned.find(origin.identity);
    const api::SourceBudgetStatus measured =
        found != learned.end() ? found->second : api::SourceBudgetStatus{};
    if (found != learned.end()) origin.budget = controller::BudgetFromStatus(measured);
    // The best throughput the fleet has seen is the most it has asked of the source, not
    // necessarily all the source can give: a prediction from it errs on the slow side.
    const ChosenRate total =
        ChooseRate(flags.origin_bytes_per_second, measured.best_bytes_per_second,
                   OriginModel{}.bytes_per_second);
    const ChosenRate stream =
        ChooseRate(flags.stream_bytes_per_second, measured.per_stream_bytes_per_second,
                   OriginModel{}.stream_bytes_per_second);
    origin.bytes_per_second = total.bytes_per_second;
    origin.stream_bytes_per_second = stream.bytes_per_second;
    basis.bytes_per_second = total.basis;
    basis.stream_bytes_per_second = stream.basis;
    if (measured.best_ttfb_milliseconds > 0) {
      origin.first_byte_seconds = static_cast<double>(measured.best_ttfb_milliseconds) / 1000.0;
    }
    if (source.capacity) {
      origin.max_streams = source.capacity->max_concurrent_fetches;
      const auto& ceiling = source.capacity->max_bytes_per_second;
      if (ceiling && static_cast<double>(*ceiling) < origin.bytes_per_second) {
        origin.bytes_per_second = static_cast<double>(*ceiling);
        basis.capped_by_capacity = true;
      }
    }
    plan.scenario.origins.push_back(std::move(origin));
    plan.origins.push_back(std::move(basis));
  }
  return {};
}

NodeModel NodeOf(const api::ModelCache& cache, const ForecastFlags& flags) {
  NodeModel node{.name = cache.metadata.name,
                 .zone = cache.status->zone,
                 .nic_bytes_per_second = flags.nic_bytes_per_second};
  // Unmeasured media keeps the model's default: a disk assumed not to be the bottleneck.
  if (cache.status->media_bandwidth_bytes_per_second > 0) {
    node.write_bytes_per_second =
        static_cast<double>(cache.status->media_bandwidth_bytes_per_second);
  }
  return node;
}

// Holders join the scenario as Ready peers; the first nodes by name that can take the revision
// (their agent reports status) stage it, as many as replicas still missing.
void AddNodes(const api::ModelRevision& revision, const ObjectListing& caches,
              const ForecastFlags& flags, RolloutPlan& plan) {
  const api::RevisionReference reference{.namespace_name = revision.metadata.namespace_name,
                                         .name = revision.metadata.name};
  const RevisionCopies copies =
      FindRevisionCopies(reference, revision.status ? revision.status->digest : "", caches.items);
  for (const std::string& unreadable : copies.unreadable) {
    plan.problems.push_back("ModelCache " + unreadable);
  }
  plan.holders = copies.NodesInState(api::kCacheStateReady);
  const std::set<std::string> holders(plan.holders.begin(), plan.holders.end());
  std::vector<api::ModelCache> parsed;
  for (const nlohmann::json& item : caches.items) {
    auto cache = api::ModelCacheFromJson(item);
    if (cache && cache->status) parsed.push_back(std::move(*cache));
  }
  std::sort(parsed.begin(), parsed.end(), [](const api::ModelCache& a, const api::ModelCache& b) {
    return a.metadata.name < b.metadata.name;
  });
  const auto held = static_cast<std::int32_t>(plan.holders.size());
  std::int32_t missing = std::max(0, plan.replicas - held);
  for (const api::ModelCache& cache : parsed) {
    NodeModel node = NodeOf(cache, flags);
    if (holders.contains(node.name)) {
      node.stages = false;
      node.holds_ready = true;
    } else if (missing > 0) {
      --missing;
      plan.staging.push_back(node.name);
      if (cache.status->media_bandwidth_bytes_per_second > 0) ++plan.measured_disks;
    } else {
      continue;  // neither serves nor stages: not part of this rollout
    }
    plan.scenario.nodes.push_back(std::move(node));
  }
  plan.unplaceable = missing;
}

}  // namespace

core::Result<RolloutPlan> PlanRollout(const nlohmann::json& object, const ObjectListing& caches,
                                      const ObjectListing& budgets, const ForecastFlags& flags) {
  auto parsed = api::ModelRevisionFromJson(object);
  if (!parsed) return std::unexpected(parsed.error().Wrap("reading the ModelRevision"));
  const api::ModelRevision& revision = *parsed;
  RolloutPlan plan{
      .revision = api::ObjectKey(revision.metadata.namespace_name, revision.metadata.name),
      .replicas = flags.replicas};
  if (api::IsRevoked(revision)) {
    return core::MakeError(
        core::ErrorCode::kInvalidArgument,
        fmt::format("ModelRevision {} is revoked and is never staged again", plan.revision));
  }
  if (revision.spec.files.empty()) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           fmt::format("ModelRevision {} lists no files", plan.revision));
  }
  if (caches.unavailable) {
    return core::MakeError(core::ErrorCode::kPermissionDenied,
                           "cannot plan without the nodes: ModelCaches could not be listed (" +
                               *caches.unavailable + ")");
  }
  for (const api::ModelFile& file : revision.spec.files) {
    plan.scenario.file_sizes.push_back(
        static_cast<std::uint64_t>(std::max<std::int64_t>(0, file.size)));
  }
  plan.scenario.time_limit_seconds = kForecastHorizonSeconds;
  if (auto added = AddOrigins(revision.spec, budgets, flags, plan); !added) {
    return std::unexpected(added.error().Wrap("ModelRevision " + plan.revision));
  }
  AddNodes(revision, caches, flags, plan);
  return plan;
}

}  // namespace modelplane::cli
