// Runs the node's stagings: a bounded number of revisions fetched at once through one shared
// FetchEngine (so the buffer pool bounds memory across all of them), each with the sources its
// spec names plus peers. The control loop says what it wants (Want) and reads back per-revision
// state (State); the stager calls `on_change` whenever a state moves so the loop re-reconciles.
// The loop also says, on every pass, which peers hold or stage each revision's blobs
// (SetPeers): a running staging gains the new peers and sees what the known ones hold now, so a
// node that waits on its zone's seeder reads each file from it as soon as it is verified there.
//
// A failed staging is retried when wanted again, no sooner than an exponential backoff
// (30 s doubling to 10 min); what it had fetched stays on disk and is resumed.
//
// Thread safety: every method may be called from any thread. Stop cancels running fetches
// (their progress stays for a resume) and joins the workers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/backoff/backoff.h"
#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/log/logger.h"
#include "node-agent/controller/peer_candidates.h"
#include "node-agent/fetch/fetch_engine.h"
#include "node-agent/fetch/fetch_metrics.h"
#include "node-agent/fetch/source_set.h"
#include "node-agent/peer/peer_range_source.h"
#include "node-agent/revision/loaded_revision.h"
#include "node-agent/revision/source_factory.h"

namespace modelplane::agent {

// Builds the source for one peer; its holding is updated as later passes learn more.
using PeerSourceFactory =
    std::function<core::Result<std::unique_ptr<PeerRangeSource>>(const PeerCandidate& peer)>;

enum class StagingPhase { kQueued, kStaging, kReady, kFailed };

struct StagingState {
  StagingPhase phase = StagingPhase::kQueued;
  // "namespace/name" of the revision whose sources the staging reads (the first that wanted
  // the digest): bytes it read from them prove those sources serve them (possession_ledger.h).
  std::string revision_key;
  std::uint64_t bytes_done = 0;
  std::uint64_t bytes_total = 0;
  std::string tier;
  StageTimes times;
  // When failed: a fixed reason code and a message fit for status (staging_failure.h).
  std::string reason;
  std::string message;
  // Where the bytes came from (kTier*), once the staging ended.
  std::map<std::string, std::uint64_t> bytes_by_tier;
  // While fetching: FetchProgress's goodput and expected finish.
  std::optional<double> goodput_bytes_per_second;
  std::optional<std::chrono::seconds> expected_finish;
};

class Stager {
 public:
  struct Dependencies {
    FetchEngine* engine = nullptr;
    SourceFactory sources;
    PeerSourceFactory peers;  // may be empty: no peers
    const core::Logger* logger = nullptr;
    const core::Clock* clock = nullptr;
    std::function<void()> on_change;
    // Every fetch's report once it returned (throughput measurements); may be empty.
    std::function<void(const FetchReport&)> on_fetched;
    // Observes each staging's bytes-to-ready when it becomes Ready; may be null.
    const FetchMetrics* metrics = nullptr;
  };

  Stager(Dependencies dependencies, int concurrency);
  Stager(const Stager&) = delete;
  Stager& operator=(const Stager&) = delete;
  ~Stager();

  // Queues the revision unless it is queued, staging, or failed within its backoff. Callers ask
  // only for revisions the store lacks, so a Ready entry here is stale and is staged again.
  void Want(const LoadedRevision& revision);
  // The peers that hold or stage the revision's blobs now (replacing what was said before).
  void SetPeers(const core::Sha256Bytes& digest, std::vector<PeerCandidate> peers);
  // Cancels a queued or running staging that is no longer wanted.
  void Forget(const core::Sha256Bytes& digest);
  [[nodiscard]] std::optional<StagingState> State(const core::Sha256Bytes& digest) const;
  // When a failed revision may be tried again (for the loop's requeue).
  [[nodiscard]] std::optional<core::Clock::SteadyTime> RetryAt(
      const core::Sha256Bytes& digest) const;
  void Stop();

 private:
  struct Entry {
    LoadedRevision revision;
    StagingState state;
    int failures = 0;
    core::Clock::SteadyTime retry_at{};
    std::shared_ptr<core::CancellationToken> cancel;
    std::vector<PeerCandidate> peers;
    // While it runs: the fetch's growing sources and its peers by endpoint.
    std::shared_ptr<SourceSet> running_sources;
    std::map<std::string, PeerRangeSource*> running_peers;
  };
  // Adds the peers the running staging does not have yet, and updates the others' holdings.
  void UpdateRunningPeersLocked(Entry& entry);
  void Work();
  void Stage(const core::Sha256Bytes& digest);
  void Notify();

  const Dependencies dependencies_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<core::Sha256Bytes, Entry> entries_;
  std::deque<core::Sha256Bytes> queue_;
  std::mt19937_64 jitter_{std::random_device{}()};  // guarded by mutex_
  bool stopping_ = false;
  std::vector<std::jthread> workers_;
};

[[nodiscard]] std::string_view StagingPhaseName(StagingPhase phase);

}  // namespace modelplane::agent
