// Leader election on a coordination.k8s.io/v1 Lease, following client-go's algorithm.
//
// - A candidate that sees a lease held by someone else waits until leaseDurationSeconds have
//   passed since *it* last saw the lease change (its own observation time, so clocks of
//   different machines never need to agree), then takes it over with an optimistic update
//   (resourceVersion), counting leaseTransitions.
// - The leader renews every retry period; if it cannot renew within the renew deadline it
//   stops leading before the lease can expire for others, so two leaders never overlap as
//   long as renew_deadline < lease_duration.
// - On a clean stop the leader releases the lease (empty holder, 1 s duration), so a
//   standby takes over at its next retry instead of waiting out the lease.
// Thread safety: Run blocks its caller; Stop may be called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/kube/kube_client.h"

namespace modelplane::core {

struct LeaderElectionOptions {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;  // unique per candidate, e.g. pod name + random suffix
  std::chrono::milliseconds lease_duration{15'000};
  std::chrono::milliseconds renew_deadline{10'000};
  std::chrono::milliseconds retry_period{2'000};
  bool release_on_cancel = true;
};

struct LeaderCallbacks {
  // Runs on its own thread while this candidate leads; it must return once `stop` fires.
  std::function<void(CancellationToken& stop)> on_started_leading;
  // `reason` says why leading ended: "stopped" after Stop(), otherwise why no renewal landed
  // within the renew deadline, so that a lost lease can be told apart from a shutdown.
  std::function<void(const std::string& reason)> on_stopped_leading;
  std::function<void(const std::string& identity)> on_new_leader;  // may be empty
};

class LeaderElector {
 public:
  [[nodiscard]] static Result<std::unique_ptr<LeaderElector>> Create(KubeClient& client,
                                                                     LeaderElectionOptions options,
                                                                     LeaderCallbacks callbacks,
                                                                     const Clock& clock);

  // Campaigns, leads until the lease is lost or Stop() is called, then returns. A process
  // normally exits (or campaigns again) after Run returns.
  void Run();
  void Stop() { stop_.Cancel(); }
  [[nodiscard]] bool IsLeader() const { return leading_.load(); }

  // One acquire-or-renew attempt; public for tests. True if this candidate holds the lease.
  // While leading it first renews from the lease as it last wrote it, one request, as
  // client-go's fast path does; only when that fails does it read the lease and write again.
  [[nodiscard]] bool TryAcquireOrRenew();

 private:
  LeaderElector(KubeClient& client, LeaderElectionOptions options, LeaderCallbacks callbacks,
                const Clock& clock);
  void Release();
  // The fast path above: an update of last_written_ with a new renewTime. False, and nothing
  // written, when that lease is not ours or has expired by our clock.
  bool RenewLastWrittenLease(Clock::WallTime now_wall, Clock::SteadyTime now);
  void ObserveWritten(nlohmann::json lease, Clock::SteadyTime now);
  // Keep why the last acquire-or-renew attempt did not hold the lease (cleared when one does),
  // for the reason given to on_stopped_leading.
  bool Failed(std::string why);
  bool Held();
  std::string LastFailure() const;
  std::chrono::nanoseconds Jittered(std::chrono::milliseconds period);

  KubeClient& client_;
  const LeaderElectionOptions options_;
  const LeaderCallbacks callbacks_;
  const Clock& clock_;
  CancellationToken stop_;
  std::atomic<bool> leading_{false};
  // What we last saw of the lease's record and when, by our own clock.
  nlohmann::json observed_spec_ = nlohmann::json::object();  // {} until a lease is read
  Clock::SteadyTime observed_time_{};
  // The lease as the API server answered our last write of it (null until then, and after a
  // renewal from it failed), with the resourceVersion that write produced.
  nlohmann::json last_written_;
  std::string reported_leader_;
  // Written by renewal attempts on their own threads, read by Run.
  mutable std::mutex failure_mutex_;
  std::string last_failure_;
  std::mt19937_64 random_{std::random_device{}()};
};

// RFC 3339 with microseconds ("MicroTime"), as Lease fields require.
[[nodiscard]] std::string FormatMicroTime(Clock::WallTime time);

}  // namespace modelplane::core
