// What each source delivered to this node over a recent window: bytes per second, the most
// requests in flight at once, request outcomes (ok, throttled, failed, timed out) and the
// median time to first byte. The agent writes a snapshot into its ModelCache status; the
// operator's admission controller sums the fleet's snapshots per source to step its budget
// (operator/admission/source_budget.h). Remote sources are named by identity
// (core/api/source_identity.h), peers by their RangeSource name ("peer/<endpoint>").
//
// Throughput is the bytes of requests that finished in the window over the time the window
// covers (shorter while the source has been used for less than a window), so one snapshot
// needs no history from the reader.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/model_cache.h"
#include "core/clock/clock.h"
#include "core/error/error.h"

namespace modelplane::agent {

enum class RequestOutcome { kOk, kThrottled, kFailed, kTimedOut };

// kThrottled for 429/503 SlowDown, kTimedOut for deadlines, kFailed for everything else.
[[nodiscard]] RequestOutcome OutcomeOf(const core::Error& error);

class SourceTelemetryRecorder {
 public:
  // At most this many finished requests are remembered per source (older ones are dropped
  // first; at 8 MiB ranges it is 64 GiB a window).
  static constexpr std::size_t kMaxEventsPerSource = 8192;

  SourceTelemetryRecorder(const core::Clock& clock, std::chrono::seconds window);

  void Started(std::string_view source, std::string_view tier);
  // Every Started is followed by one Finished or one Abandoned for the same source.
  void Finished(std::string_view source, RequestOutcome outcome, std::uint64_t bytes,
                std::optional<std::chrono::milliseconds> time_to_first_byte);
  // A request ended by the caller's cancel: it says nothing about the source.
  void Abandoned(std::string_view source);

  // Sources with a request in the window or in flight, busiest first, at most `max_sources`.
  // granted_streams is left at -1 for the caller to fill.
  [[nodiscard]] std::vector<core::api::SourceTelemetry> Snapshot(std::size_t max_sources) const;

 private:
  struct Event {
    core::Clock::SteadyTime at;
    std::uint64_t bytes = 0;
    RequestOutcome outcome = RequestOutcome::kOk;
    std::optional<std::chrono::milliseconds> ttfb;
  };
  struct Source {
    std::string tier;
    int in_flight = 0;
    std::deque<Event> finished;
    // (when a request started, how many were in flight with it): the window's peak.
    std::deque<std::pair<core::Clock::SteadyTime, int>> levels;
  };
  void Trim(Source& source, core::Clock::SteadyTime now) const;

  const core::Clock& clock_;
  const std::chrono::seconds window_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, Source, std::less<>> sources_;
};

}  // namespace modelplane::agent
