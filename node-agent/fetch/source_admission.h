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
// A source that no grant names, while none of the node's grants is valid, is one the operator
// has not reached yet (a new staging: it writes the entry first, the grants on its next pass)
// or one it no longer grants (it is gone). The agent waits start_grace, counted from when a
// staging began asking for the source (not from the agent's start: an agent idle for an hour
// has not used its grace), so followers do not read the origin before the operator has named
// a seeder. While the operator shows it is alive (its leader Lease renewed lately, seen by
// OperatorLeaseWatch) the wait goes on up to first_grant_wait: on a loaded control plane its
// pass reaches a new follower tens of seconds late, and a follower that read the origin
// meanwhile would undo the fan-out. After that, or at once past start_grace when the operator
// is not seen alive, the source gets the safe capacity.
// Once grants lapse, a seeder goes on at no more than the safe capacity, and a follower waits
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
  // How long a staging waits for a grant for a source no grant names before the safe capacity
  // applies (counted from its first request for the source).
  std::chrono::seconds start_grace{10};
  // The same wait while the operator is seen alive (SetOperatorAliveUntil).
  std::chrono::seconds first_grant_wait{60};
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

  // Whether a staging is waiting for a grant for a source that no grant names while none of
  // the node's grants is valid: only then does the operator's liveness matter.
  [[nodiscard]] bool AwaitingFirstGrant() const;
  // The operator was seen alive; it counts as alive until `until`.
  void SetOperatorAliveUntil(core::Clock::SteadyTime until);

 private:
  struct State {
    int in_flight = 0;
    double window = 0;  // the local limiter, inside the cap; 0 until first used
    core::Clock::SteadyTime paused_until{};
    core::Clock::SteadyTime next_start{};
    // When stagings last asked for the source, and when they began to (after a quiet gap).
    std::optional<core::Clock::SteadyTime> asked_at;
    core::Clock::SteadyTime asking_since{};
  };
  // Asks this long apart belong to different stagings: the fetch engine asks again every few
  // milliseconds while it waits for a slot.
  static constexpr std::chrono::seconds kAskingGap{5};

  // Records a request for the source (it starts a new wait after a quiet gap).
  void NoteAskedLocked(State& state) const;
  [[nodiscard]] static bool AskingLocked(const State& state, core::Clock::SteadyTime now);
  // The cap before the local limiter: the grant, the safe capacity, or 0 while waiting.
  [[nodiscard]] int CapLocked(std::string_view source, const State& state) const;
  [[nodiscard]] bool AnyValidGrantLocked() const;
  [[nodiscard]] int LimitLocked(std::string_view source, State& state) const;

  const core::Clock& clock_;
  const AdmissionOptions options_;
  mutable std::mutex mutex_;
  core::Clock::SteadyTime operator_alive_until_{};
  std::map<std::string, core::api::StreamGrant, std::less<>> grants_;
  mutable std::map<std::string, State, std::less<>> states_;
};

}  // namespace modelplane::agent
