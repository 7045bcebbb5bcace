#include "kubectl-plugin/rollout_forecast_report.h"

#include <algorithm>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "kubectl-plugin/terminal_text.h"

namespace modelplane::cli {

using simulation::NodeModel;
using simulation::RolloutOutcome;

namespace {

constexpr std::size_t kNamesListed = 5;  // node names on one line before "and N more"

std::string NamesText(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t index = 0; index < names.size() && index < kNamesListed; ++index) {
    text += (index == 0 ? "" : ", ") + names[index];
  }
  if (names.size() > kNamesListed) text += fmt::format(" and {} more", names.size() - kNamesListed);
  return text;
}

std::string Plural(std::size_t count, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", count, count == 1 ? one : many);
}

std::string RateText(double bytes_per_second) {
  return FormatBytes(static_cast<std::int64_t>(bytes_per_second)) + "/s";
}

double ModelBytes(const RolloutPlan& plan) {
  return static_cast<double>(std::accumulate(plan.scenario.file_sizes.begin(),
                                             plan.scenario.file_sizes.end(), std::uint64_t{0}));
}

// Nodes staging and holding per zone, in zone order.
std::string ZonesText(const RolloutPlan& plan) {
  std::map<std::string, std::pair<int, int>> zones;  // zone -> staging, Ready
  for (const NodeModel& node : plan.scenario.nodes) {
    auto& [staging, ready] = zones[node.zone.empty() ? "(no zone)" : node.zone];
    ++(node.stages ? staging : ready);
  }
  std::string text;
  for (const auto& [zone, counts] : zones) {
    text += fmt::format("{}{} {} staging, {} Ready", text.empty() ? "" : "; ", zone, counts.first,
                        counts.second);
  }
  return text;
}

std::string BasisText(RateBasis basis, std::string_view flag) {
  switch (basis) {
    case RateBasis::kMeasured: return "measured";
    case RateBasis::kFlag: return std::string(flag);
    case RateBasis::kAssumed: return "assumed";
  }
  return "";
}

std::string OriginText(const simulation::OriginModel& origin, const OriginBasis& basis) {
  std::string text = fmt::format("{} ({}): {} in all ({}{}), {} a stream ({})", basis.source_name,
                                 origin.identity, RateText(origin.bytes_per_second),
                                 BasisText(basis.bytes_per_second, "--origin-gbps"),
                                 basis.capped_by_capacity ? ", capped by its capacity hint" : "",
                                 RateText(origin.stream_bytes_per_second),
                                 BasisText(basis.stream_bytes_per_second, "--stream-mbps"));
  if (origin.budget) {
    text +=
        fmt::format("; budget {} learned",
                    Plural(static_cast<std::size_t>(origin.budget->streams), "stream", "streams"));
  }
  return text;
}

const NodeModel* SlowestStagingNode(const RolloutPlan& plan) {
  const NodeModel* slowest = nullptr;
  for (const NodeModel& node : plan.scenario.nodes) {
    if (!node.stages) continue;
    if (slowest == nullptr ||
        LowerBoundSeconds(plan.scenario, node) > LowerBoundSeconds(plan.scenario, *slowest)) {
      slowest = &node;
    }
  }
  return slowest;
}

// The time from queued to the last node Ready; the horizon when some never were.
double LastReadySeconds(const RolloutOutcome& outcome) {
  return outcome.complete ? StagingQuantile(outcome, 1.0) : outcome.finished_at;
}

// The nodes that got most of the model from origins, and when the last of them was Ready.
struct Seeders {
  std::size_t count = 0;
  double last_ready = 0;
};

Seeders SeedersOf(const RolloutOutcome& outcome) {
  Seeders seeders;
  for (const simulation::NodeOutcome& node : outcome.nodes) {
    if (node.origin_bytes < outcome.model_bytes / 2) continue;
    ++seeders.count;
    const double ready = node.ready_at >= 0 ? node.ready_at - node.queued_at : outcome.finished_at;
    seeders.last_ready = std::max(seeders.last_ready, ready);
  }
  return seeders;
}

std::string TimeToReadyText(const RolloutPlan& plan, const RolloutOutcome& outcome) {
  const double p50 = StagingQuantile(outcome, 0.5);
  const double p99 = StagingQuantile(outcome, 0.99);
  if (outcome.complete) {
    return fmt::format("p50 {}, p99 {}; all {} Ready after {} (queued to Ready)",
                       FormatSeconds(p50), FormatSeconds(p99), plan.staging.size(),
                       FormatSeconds(LastReadySeconds(outcome)));
  }
  const auto ready = static_cast<std::size_t>(
      std::count_if(outcome.nodes.begin(), outcome.nodes.end(),
                    [](const simulation::NodeOutcome& node) { return node.ready_at >= 0; }));
  std::string text = fmt::format("only {} of {} Ready within {} (the forecast's horizon)", ready,
                                 plan.staging.size(), FormatSeconds(outcome.finished_at));
  if (ready > 0) text += fmt::format("; p50 of those {}", FormatSeconds(p50));
  return text;
}

std::string LowerBoundText(const RolloutPlan& plan) {
  const NodeModel* slowest = SlowestStagingNode(plan);
  const bool disk = slowest->write_bytes_per_second < slowest->nic_bytes_per_second;
  return fmt::format(
      "{} ({} at {}, the slowest staging node's {})", FormatSeconds(SlowestLowerBound(plan)),
      FormatBytes(static_cast<std::int64_t>(ModelBytes(plan))),
      RateText(std::min(slowest->nic_bytes_per_second, slowest->write_bytes_per_second)),
      disk ? "disk" : "NIC");
}

std::string OriginCopiesText(const RolloutOutcome& outcome) {
  double bytes = 0;
  for (const auto& [zone, zone_bytes] : outcome.origin_bytes_by_zone) bytes += zone_bytes;
  return fmt::format("{:.2f} per staging zone ({} read from origins)", OriginCopiesPerZone(outcome),
                     FormatBytes(static_cast<std::int64_t>(bytes)));
}

std::string LimitText(const RolloutPlan& plan, const RolloutOutcome& outcome) {
  const double last = LastReadySeconds(outcome);
  const Seeders seeders = SeedersOf(outcome);
  switch (LimitOf(plan, outcome)) {
    case RolloutLimit::kNothingToStage: return "nothing stages";
    case RolloutLimit::kNodeDownload:
      return fmt::format(
          "each node's own NIC or disk: the last node is Ready after {}, within {:.0f}% of the "
          "lower bound; only faster nodes would shorten it",
          FormatSeconds(last), (kNearLowerBound - 1) * 100);
    case RolloutLimit::kOriginSeeders:
      return fmt::format(
          "the origin's rate for the zone seeders: {} read the model from origins, the last "
          "Ready after {} of {}; a faster origin or more streams would shorten it",
          Plural(seeders.count, "seeder", "seeders"), FormatSeconds(seeders.last_ready),
          FormatSeconds(last));
    case RolloutLimit::kFanOut:
      if (seeders.count == 0) {
        return fmt::format(
            "the fan-out from the nodes that hold it (no node reads origins): the last node "
            "Ready after {}; the busiest node served peers at {}",
            FormatSeconds(last), RateText(outcome.peak_peer_upload_bytes_per_second));
      }
      return fmt::format(
          "the fan-out inside the zones: {} Ready after {}, the last node after {}; the "
          "busiest node served peers at {}",
          Plural(seeders.count, "seeder", "seeders"), FormatSeconds(seeders.last_ready),
          FormatSeconds(last), RateText(outcome.peak_peer_upload_bytes_per_second));
  }
  return "";
}

std::string Notes(const RolloutPlan& plan) {
  std::string notes;
  auto add = [&notes](const std::string& paragraph) {
    notes += "\n" + WrapParagraph(Printable(paragraph)) + "\n";
  };
  if (plan.unplaceable > 0) {
    add(fmt::format(
        "{} of the {} replicas asked for have no node: only nodes whose agent reports status "
        "and that do not hold the revision can take it.",
        plan.unplaceable, plan.replicas));
  }
  for (std::size_t index = 0; index < plan.origins.size(); ++index) {
    const OriginBasis& basis = plan.origins[index];
    if (basis.bytes_per_second == RateBasis::kAssumed ||
        basis.stream_bytes_per_second == RateBasis::kAssumed) {
      add(fmt::format(
          "The fleet has not measured source {} yet (its SourceBudget has no status): its "
          "assumed rates are the simulator's defaults; --origin-gbps and --stream-mbps set them.",
          basis.source_name));
    }
  }
  for (const std::string& problem : plan.problems) add(problem);
  add("A prediction from the rollout simulator (docs/scale.md) on the cluster's telemetry, not a "
      "measurement. It assumes every staging node is queued at once, the operator's and agents' "
      "default settings, and the NIC speed given; it does not model failures, evictions or other "
      "rollouts at the same time.");
  return notes;
}

}  // namespace

double SlowestLowerBound(const RolloutPlan& plan) {
  const NodeModel* slowest = SlowestStagingNode(plan);
  return slowest == nullptr ? 0 : LowerBoundSeconds(plan.scenario, *slowest);
}

RolloutLimit LimitOf(const RolloutPlan& plan, const RolloutOutcome& outcome) {
  if (plan.staging.empty()) return RolloutLimit::kNothingToStage;
  const double last = LastReadySeconds(outcome);
  if (outcome.complete && last <= kNearLowerBound * SlowestLowerBound(plan)) {
    return RolloutLimit::kNodeDownload;
  }
  const Seeders seeders = SeedersOf(outcome);
  if (seeders.count > 0 && seeders.last_ready >= kSeedersLateShare * last) {
    return RolloutLimit::kOriginSeeders;
  }
  return RolloutLimit::kFanOut;
}

std::string RenderRolloutForecast(const RolloutPlan& plan, const RolloutOutcome& outcome) {
  std::string out;
  out +=
      FieldLine("Revision", fmt::format("{} ({} in {})", plan.revision,
                                        FormatBytes(static_cast<std::int64_t>(ModelBytes(plan))),
                                        Plural(plan.scenario.file_sizes.size(), "file", "files")));
  std::string replicas =
      fmt::format("{} asked: {} already Ready", plan.replicas, plan.holders.size());
  if (!plan.holders.empty()) replicas += " (" + NamesText(plan.holders) + ")";
  replicas += fmt::format(", {} to stage", plan.staging.size());
  if (!plan.staging.empty()) replicas += " (" + NamesText(plan.staging) + ")";
  out += WrappedFieldLine("Replicas", replicas);
  if (plan.staging.empty()) {
    out += FieldLine("Prediction", plan.holders.empty()
                                       ? "none: no node can take the revision"
                                       : "nothing to stage: enough nodes hold it Ready");
    return out + Notes(plan);
  }
  out += WrappedFieldLine("Zones", ZonesText(plan));
  out += FieldLine(
      "NIC", fmt::format("{} Gbit/s each way on every node (--nic-gbps; not in the API)",
                         plan.scenario.nodes.front().nic_bytes_per_second / simulation::kGigabit));
  std::string disks =
      fmt::format("{} of {} staging nodes measured", plan.measured_disks, plan.staging.size());
  if (plan.measured_disks < static_cast<std::int32_t>(plan.staging.size())) {
    disks += "; the others assumed not to limit";
  }
  out += FieldLine("Disks", disks);
  for (std::size_t index = 0; index < plan.origins.size(); ++index) {
    out +=
        WrappedFieldLine("Origin", OriginText(plan.scenario.origins[index], plan.origins[index]));
  }
  out += "\n";
  out += WrappedFieldLine("Time-to-ready", TimeToReadyText(plan, outcome));
  out += WrappedFieldLine("Lower bound", LowerBoundText(plan));
  out += WrappedFieldLine("Origin copies", OriginCopiesText(outcome));
  out += WrappedFieldLine("Limited by", LimitText(plan, outcome));
  return out + Notes(plan);
}

}  // namespace modelplane::cli
