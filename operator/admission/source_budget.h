// How many concurrent range requests one source (an object-store endpoint and bucket, an HTTP
// origin, a shared-filesystem root) may take from the whole fleet, learned from what the agents
// measure. Pure: one Step per measurement interval, with the interval's aggregate observation;
// time comes from the caller.
//
// The rule (a gradient-style limiter, like Netflix's concurrency-limits, with AWS adaptive
// retry's multiplicative cut):
//   - start small (kInitialStreams, or the spec's maxConcurrentFetches hint if smaller);
//   - while the budget is used (the fleet asked for at least what it was granted) and the last
//     increase bought throughput (at least kMinGain more per added stream than the average),
//     grow: double while far from any knee seen, one stream at a time near it;
//   - when an increase bought nothing, the knee is behind: step back to where the best
//     throughput needs no more streams than it takes at the best per-stream rate seen (the
//     doubling may have overshot it), hold there, and probe one stream up every kProbeEvery
//     steps;
//   - on throttling (429, 503 SlowDown), an error rate over kMaxErrorRate, timeouts, or time to
//     first byte over kLatencyRise times the best seen (and over it by kLatencyFloorSeconds, so
//     that a few milliseconds of jitter on a fast source are not a rise), cut by kCutFactor at
//     once;
//   - never above the spec's capacity hints (ceilings, not targets), never below one stream.
// A byte-rate ceiling (maxBytesPerSecond) is passed through as the grant's rate.
// Thread safety: a plain value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace modelplane::controller {

inline constexpr int kInitialStreams = 4;
inline constexpr double kCutFactor = 0.7;
inline constexpr double kMinGain = 0.5;        // of the average throughput per stream
inline constexpr double kMaxErrorRate = 0.05;  // of requests
inline constexpr double kLatencyRise = 3.0;    // times the best time to first byte seen
inline constexpr double kLatencyFloorSeconds = 0.05;
inline constexpr int kProbeEvery = 6;  // steps at the knee between probes

// What the agents measured for one source over one interval, summed over the fleet.
struct SourceObservation {
  double bytes_per_second = 0;
  int streams_in_use = 0;  // the fleet's peak concurrent requests to it in the interval
  std::int64_t requests_ok = 0;
  std::int64_t throttled = 0;  // 429 and 503 SlowDown
  std::int64_t errors = 0;     // other failures
  std::int64_t timeouts = 0;
  double ttfb_seconds = 0;  // median time to first byte, 0 when unknown
};

struct SourceCeiling {
  std::optional<std::int32_t> max_streams;
  std::optional<std::int64_t> max_bytes_per_second;
};

enum class BudgetPhase { kGrowing, kHolding, kCut };

struct SourceBudget {
  int streams = kInitialStreams;
  std::optional<std::int64_t> bytes_per_second;  // a rate to enforce, when a ceiling says so
  BudgetPhase phase = BudgetPhase::kGrowing;
  // Learned: the best level that paid, the throughput there, the best latency seen.
  int knee_streams = 0;  // 0 until one was found
  double best_throughput = 0;
  int best_streams = 0;
  // The most one stream delivered (at low concurrency, before the source saturates): with the
  // best throughput it estimates the knee (best / per stream) when doubling overshot it.
  double per_stream = 0;
  double best_ttfb_seconds = 0;
  int steps_at_knee = 0;
  std::string last_reason;  // why the last step did what it did, for status and logs
};

[[nodiscard]] std::string_view BudgetPhaseName(BudgetPhase phase);

// The first budget of a source: small, and within its ceiling.
[[nodiscard]] SourceBudget InitialBudget(const SourceCeiling& ceiling);

// The bytes per second the budget lets the fleet read from the source: its streams at the
// best rate one stream delivered, no more than the best throughput seen (past the knee more
// streams buy nothing) and the byte-rate ceiling. Empty until something was measured and no
// ceiling says it. What rollouts predict their stagings' time from (rollout_readiness.h).
[[nodiscard]] std::optional<double> BudgetBytesPerSecond(const SourceBudget& budget);

// The budget after one interval.
[[nodiscard]] SourceBudget StepBudget(const SourceBudget& budget,
                                      const SourceObservation& observation,
                                      const SourceCeiling& ceiling);

}  // namespace modelplane::controller
