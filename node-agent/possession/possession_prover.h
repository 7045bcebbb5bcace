// Runs proofs of possession (possession_proof.h) in the background: before the node serves
// bytes it holds to a revision that did not stage them, the revision's own sources must serve
// the same bytes at random sampled ranges. The control loop says what it wants proven (Want)
// and reads back per-revision state (State); a proven revision lands in the ledger (which is
// what the node consults to serve it) and the prover forgets it; `on_change` fires whenever a
// state moves so the loop re-reconciles.
//
// Revisions are keyed by digest and "namespace/name": the same spec copied into another
// namespace is a different claim, proven on its own. A failed proof is tried again when wanted
// again, no sooner than a jittered exponential backoff (30 s doubling to 10 min). At most
// kMaxPendingProofs wait; a Want past that is dropped, and the loop's next pass asks again.
//
// Thread safety: every method may be called from any thread. Stop cancels the running proof
// and joins the worker.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/digest/sha256.h"
#include "core/log/logger.h"
#include "node-agent/possession/possession_ledger.h"
#include "node-agent/revision/loaded_revision.h"
#include "node-agent/revision/source_factory.h"
#include "node-agent/store/blob_catalog.h"

namespace modelplane::agent {

inline constexpr std::size_t kMaxPendingProofs = 256;

struct PossessionState {
  enum class Phase { kProving, kFailed };
  Phase phase = Phase::kProving;
  // When failed: a fixed reason code and a message fit for status (possession_failure.h).
  std::string reason;
  std::string message;
};

class PossessionProver {
 public:
  struct Dependencies {
    SourceFactory sources;  // the revision's own sources
    const BlobCatalog* catalog = nullptr;
    PossessionLedger* ledger = nullptr;
    const core::Logger* logger = nullptr;  // may be null
    const core::Clock* clock = nullptr;
    std::function<void()> on_change;  // may be empty
    // The deadline for a whole proof, every read of every source included.
    std::chrono::seconds read_timeout{60};
  };

  explicit PossessionProver(Dependencies dependencies);
  PossessionProver(const PossessionProver&) = delete;
  PossessionProver& operator=(const PossessionProver&) = delete;
  ~PossessionProver();

  // Queues a proof unless the ledger has the revision already, or it is queued or running, or
  // it failed and its retry time has not come.
  void Want(const LoadedRevision& revision);
  // nullopt when never wanted, dropped, or proven (the ledger says so).
  [[nodiscard]] std::optional<PossessionState> State(const core::Sha256Bytes& digest,
                                                     std::string_view key) const;
  // When a failed proof may be tried again (for the loop's requeue).
  [[nodiscard]] std::optional<core::Clock::SteadyTime> RetryAt(const core::Sha256Bytes& digest,
                                                               std::string_view key) const;
  // Revision digest and "namespace/name", as Want keys a revision.
  using Key = std::pair<core::Sha256Bytes, std::string>;
  // Forgets every proof not in `wanted`: a queued one leaves the queue, a running one is
  // cancelled, a failed one's state goes (the loop passes the revisions it still wants proven,
  // so what a tenant stopped asking for does not stay in memory).
  void Keep(const std::set<Key>& wanted);
  void Stop();

 private:
  struct Entry {
    LoadedRevision revision;
    PossessionState state;
    int failures = 0;
    core::Clock::SteadyTime retry_at{};
    std::shared_ptr<core::CancellationToken> cancel;  // while it runs
  };
  void Work();
  void Prove(const Key& key);
  void Notify();

  const Dependencies dependencies_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<Key, Entry> entries_;
  std::deque<Key> queue_;
  std::mt19937_64 jitter_{std::random_device{}()};         // guarded by mutex_
  std::mt19937_64 sample_random_{std::random_device{}()};  // the worker's alone
  bool stopping_ = false;
  std::jthread worker_;  // last: started once everything above exists
};

}  // namespace modelplane::agent
