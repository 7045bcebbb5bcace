// How many requests this node may have in flight to each remote source, across all its
// stagings: the operator's grant (ModelCache spec.grants) while it is valid, else a small safe
// capacity of the agent's own, so a fleet whose operator is gone cannot stampede its origins.
//
// Inside a grant the agent runs its own limiter, as AWS's adaptive retry mode and the
// concurrency-limits libraries do: the window starts at the grant, shrinks by kCut on every
// throttled answer (429, 503 SlowDown), grows back by one stream per window of successes,
// and never passes the grant. A Retry-After pauses the source until then. A byte rate in the
// grant is kept by spacing request starts: each finished request pushes the next start back by
// its bytes over the rate.
//
// Until the first grant arrives (start_grace after the agent starts) the agent waits, so a
// fresh fleet's followers do not read the origin before the operator has named a seeder. Once
// grants lapse, a seeder goes on at no more than the safe capacity, and a follower waits
// follower_grace longer before it does.
// Sources without a grant entry while grants are flowing get 0: the operator only leaves out
// sources it wants no one to read.
// With admission disabled (a cluster without the admission controller) every source is
// unlimited here; each source's own concurrency still applies.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/model_cache.h"
#include "core/clock/clock.h"
#include "node-agent/fetch/source_telemetry.h"

namespace modelplane::agent {

struct AdmissionOptions {
  bool enabled = true;
  // Streams per source while no valid grant is held (the operator unreachable): small, so that
  // N nodes falling back together stay far below what the grants allowed.
  int safe_streams = 2;
  // How long after start the agent waits for its first grant before the safe capacity applies.
  std::chrono::seconds start_grace{10};
  // A follower (its last grant for the source was 0) keeps waiting for its peers this long past
  // the grant's expiry before it, too, reads at the safe capacity: an operator that is only
  // slow must not turn every follower into a reader of the origin.
  std::chrono::seconds follower_grace{60};
};

class SourceAdmission {
 public:
  static constexpr double kCut = 0.7;
  static constexpr int kUnlimited = -1;

  SourceAdmission(const core::Clock& clock, AdmissionOptions options);

  [[nodiscard]] bool enabled() const { return options_.enabled; }

  // The node's grants, as its ModelCache spec lists them now (replacing the previous set).
  void SetGrants(const std::vector<core::api::StreamGrant>& grants);

  // A stream of `source` for one request, or false: at the limit, paused by a Retry-After, or
  // waiting out the byte rate. Never blocks.
  [[nodiscard]] bool TryAcquire(std::string_view source);
  // Ends a request that TryAcquire admitted.
  void Release(std::string_view source, RequestOutcome outcome, std::uint64_t bytes,
               std::optional<std::chrono::milliseconds> retry_after);

  // What the source may have in flight now (kUnlimited when admission is off).
  [[nodiscard]] int Limit(std::string_view source) const;

 private:
  struct State {
    int in_flight = 0;
    double window = 0;  // the local limiter, inside the cap; 0 until first used
    core::Clock::SteadyTime paused_until{};
    core::Clock::SteadyTime next_start{};
  };
  // The cap before the local limiter: the grant, the safe capacity, or 0 while waiting.
  [[nodiscard]] int CapLocked(std::string_view source) const;
  [[nodiscard]] int LimitLocked(std::string_view source, State& state) const;

  const core::Clock& clock_;
  const AdmissionOptions options_;
  const core::Clock::SteadyTime started_;
  mutable std::mutex mutex_;
  bool granted_once_ = false;
  std::map<std::string, core::api::StreamGrant, std::less<>> grants_;
  mutable std::map<std::string, State, std::less<>> states_;
};

}  // namespace modelplane::agent
