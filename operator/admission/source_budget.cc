#include "operator/admission/source_budget.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace modelplane::controller {
namespace {

int Clamp(int streams, const SourceCeiling& ceiling) {
  int bounded = std::max(1, streams);
  if (ceiling.max_streams) bounded = std::min(bounded, std::max(1, *ceiling.max_streams));
  return bounded;
}

bool Congested(const SourceBudget& budget, const SourceObservation& observation, std::string& why) {
  const std::int64_t requests =
      observation.requests_ok + observation.throttled + observation.errors + observation.timeouts;
  if (observation.throttled > 0) {
    why = fmt::format("{} throttled answers (429/503 SlowDown)", observation.throttled);
    return true;
  }
  if (observation.timeouts > 0) {
    why = fmt::format("{} timeouts", observation.timeouts);
    return true;
  }
  if (requests > 0 &&
      static_cast<double>(observation.errors) / static_cast<double>(requests) > kMaxErrorRate) {
    why = fmt::format("{} of {} requests failed", observation.errors, requests);
    return true;
  }
  if (budget.best_ttfb_seconds > 0 && observation.ttfb_seconds > 0 &&
      observation.ttfb_seconds > kLatencyRise * budget.best_ttfb_seconds &&
      observation.ttfb_seconds > budget.best_ttfb_seconds + kLatencyFloorSeconds) {
    why = fmt::format("time to first byte {:.3f} s, best {:.3f} s", observation.ttfb_seconds,
                      budget.best_ttfb_seconds);
    return true;
  }
  return false;
}

}  // namespace

std::string_view BudgetPhaseName(BudgetPhase phase) {
  switch (phase) {
    case BudgetPhase::kGrowing: return "Growing";
    case BudgetPhase::kHolding: return "Holding";
    case BudgetPhase::kCut: return "Cut";
  }
  return "Unknown";
}

SourceBudget InitialBudget(const SourceCeiling& ceiling) {
  SourceBudget budget;
  budget.streams = Clamp(kInitialStreams, ceiling);
  budget.bytes_per_second = ceiling.max_bytes_per_second;
  budget.last_reason = "started small";
  return budget;
}

std::optional<double> BudgetBytesPerSecond(const SourceBudget& budget) {
  std::optional<double> rate;
  if (budget.per_stream > 0) {
    rate = budget.per_stream * budget.streams;
    if (budget.best_throughput > 0) rate = std::min(*rate, budget.best_throughput);
  }
  if (budget.bytes_per_second && *budget.bytes_per_second > 0) {
    const auto ceiling = static_cast<double>(*budget.bytes_per_second);
    rate = rate ? std::min(*rate, ceiling) : ceiling;
  }
  return rate;
}

SourceBudget StepBudget(const SourceBudget& budget, const SourceObservation& observation,
                        const SourceCeiling& ceiling) {
  SourceBudget next = budget;
  next.bytes_per_second = ceiling.max_bytes_per_second;
  if (observation.ttfb_seconds > 0 &&
      (next.best_ttfb_seconds == 0 || observation.ttfb_seconds < next.best_ttfb_seconds)) {
    next.best_ttfb_seconds = observation.ttfb_seconds;
  }
  std::string why;
  if (Congested(budget, observation, why)) {
    const int cut = static_cast<int>(std::floor(budget.streams * kCutFactor));
    next.streams = Clamp(std::min(cut, budget.streams - 1), ceiling);
    // What paid before the source pushed back no longer counts: measure again from here.
    next.knee_streams = next.streams;
    next.best_streams = next.streams;
    next.best_throughput = 0;
    next.phase = BudgetPhase::kCut;
    next.steps_at_knee = 0;
    next.last_reason = "cut: " + why;
    return next;
  }
  // A budget the fleet did not use says nothing about the source.
  if (observation.streams_in_use < budget.streams) {
    next.streams = Clamp(budget.streams, ceiling);
    next.last_reason =
        fmt::format("unused ({} of {} streams)", observation.streams_in_use, budget.streams);
    return next;
  }
  const double throughput = observation.bytes_per_second;
  next.per_stream = std::max(budget.per_stream, throughput / budget.streams);
  if (budget.best_streams == 0 || budget.streams <= budget.best_streams) {
    // The reference level: what `best_streams` streams deliver.
    next.best_streams = budget.streams;
    next.best_throughput =
        std::max(throughput, budget.streams == budget.best_streams ? budget.best_throughput : 0.0);
  } else {
    // Above the reference: did the added streams pay?
    const double per_stream = budget.best_throughput / budget.best_streams;
    const double gain = throughput - budget.best_throughput;
    const bool paid = gain >= kMinGain * per_stream * (budget.streams - budget.best_streams);
    if (!paid) {
      // The plateau needs best / per-stream streams: between the level that paid and this one.
      const double best = std::max(budget.best_throughput, throughput);
      const int estimate =
          next.per_stream > 0 ? static_cast<int>(std::ceil(best / next.per_stream - 1e-9)) : 1;
      next.knee_streams = std::clamp(estimate, 1, budget.streams);
      next.best_streams = next.knee_streams;
      next.best_throughput = best;
      next.streams = Clamp(next.knee_streams, ceiling);
      next.phase = BudgetPhase::kHolding;
      next.steps_at_knee = 0;
      next.last_reason = fmt::format("{} streams bought nothing over {}: holding at {}",
                                     budget.streams, budget.best_streams, next.streams);
      return next;
    }
    next.best_streams = budget.streams;
    next.best_throughput = throughput;
    if (budget.phase != BudgetPhase::kGrowing) {
      next.knee_streams = budget.streams;  // a probe paid: the knee moved up
      next.phase = BudgetPhase::kGrowing;
    }
  }
  if (next.phase == BudgetPhase::kGrowing) {
    // Double while no knee is known, then one stream at a time.
    const int grown = next.knee_streams == 0 ? budget.streams * 2 : budget.streams + 1;
    next.streams = Clamp(grown, ceiling);
    next.last_reason = next.streams == budget.streams ? std::string("at the ceiling")
                                                      : fmt::format("{} streams paid; trying {}",
                                                                    budget.streams, next.streams);
    return next;
  }
  // Holding (or recovering from a cut): probe one stream up now and then.
  next.phase = BudgetPhase::kHolding;
  if (++next.steps_at_knee >= kProbeEvery) {
    next.steps_at_knee = 0;
    next.streams = Clamp(budget.streams + 1, ceiling);
    next.last_reason = fmt::format("probing {} streams", next.streams);
  } else {
    next.streams = Clamp(budget.streams, ceiling);
    next.last_reason = fmt::format("holding at {} streams", budget.streams);
  }
  return next;
}

}  // namespace modelplane::controller
