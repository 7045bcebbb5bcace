// Tells the node's SourceAdmission whether the operator is alive, from the operator's
// leader-election Lease (coordination.k8s.io/v1), so that a staging the operator has not
// reached yet keeps waiting for its grant while the operator lives (source_admission.h) and
// reads at the safe capacity only once it is gone.
//
// It reads the Lease only while a staging waits for a first grant
// (SourceAdmission::AwaitingFirstGrant), at most once per poll interval: an idle fleet costs
// the API server nothing, and a rollout costs one GET per waiting node per interval. It also
// reads it once at start, so a missing RBAC grant or a wrong name shows in the log then, not
// in the middle of a rollout.
//
// Thread safety: Start and Stop from one thread; LookOnce only while the loop does not run
// (tests call it directly).
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/kube/builtin_types.h"
#include "core/kube/kube_client.h"
#include "core/log/logger.h"
#include "node-agent/fetch/source_admission.h"

namespace modelplane::agent {

struct OperatorLeaseWatchOptions {
  std::string lease_namespace;
  std::string lease_name;
  std::chrono::milliseconds poll_interval{2'000};
  // How far the operator's clock may run ahead of or behind this node's.
  std::chrono::seconds clock_skew{5};
};

// How much longer the Lease's holder counts as alive at `now`: until its renew time plus its
// duration plus `clock_skew`; zero once that has passed, and for a released lease (no holder)
// or one without a renew time.
[[nodiscard]] core::Clock::WallTime::duration LeaseHolderAliveFor(const core::Lease& lease,
                                                                  core::Clock::WallTime now,
                                                                  std::chrono::seconds clock_skew);
// Whether the Lease has a holder that renewed it within its duration (plus `clock_skew`) of
// `now`: LeaseHolderAliveFor is above zero.
[[nodiscard]] bool LeaseShowsLiveHolder(const core::Lease& lease, core::Clock::WallTime now,
                                        std::chrono::seconds clock_skew);

class OperatorLeaseWatch {
 public:
  OperatorLeaseWatch(core::KubeClient& client, SourceAdmission& admission,
                     const core::Logger& logger, const core::Clock& clock,
                     OperatorLeaseWatchOptions options);
  ~OperatorLeaseWatch() { Stop(); }
  OperatorLeaseWatch(const OperatorLeaseWatch&) = delete;
  OperatorLeaseWatch& operator=(const OperatorLeaseWatch&) = delete;

  void Start();
  // Waits for the loop to end (a read in flight ends at the client's request timeout).
  void Stop();

  // Reads the Lease once and, if it shows the operator alive, tells the admission so, for as
  // long as the Lease itself vouches for it (LeaseHolderAliveFor), not just until the next
  // look: on a loaded API server a read takes seconds or fails, and a window of a poll
  // interval or two lapsed between reads and let waiting followers read the origin while the
  // operator was alive and renewing (docs/fleet.md). Returns whether it did.
  bool LookOnce();

 private:
  void Run();

  core::KubeClient& client_;
  SourceAdmission& admission_;
  core::Logger logger_;
  const core::Clock& clock_;
  const OperatorLeaseWatchOptions options_;
  core::CancellationToken stop_;
  std::thread thread_;
  // What the last look found, so the log says when it changes, not on every look.
  std::string last_outcome_;
};

}  // namespace modelplane::agent
