// Carries out evictions the control loop decided (retention_policy.h), on a thread of its own so
// a slow or paced removal never holds up the loop, in the order given.
//
// One revision, in this order, so a `kill -9` at any point leaves a consistent store (no
// manifest naming a missing blob; nothing half-removed reported Ready):
//   1. ask `may_evict` again (a pod may have started since the plan) and claim the view from
//      the CSI plugin (view_guard.h): refused while a pod has it mounted, unless forced;
//   2. CacheStore::RemoveRevision: out of memory (no longer Ready, no new mount), manifest
//      unlinked and its folder synced, then the view;
//   3. the claim goes; the blobs the plan listed are removed, each only if no manifest, staging
//      or hold still references it (the store checks), paced at `delete_bytes_per_second`
//      (deleting hundreds of GB at once stalls some filesystems; 0 = unpaced).
// After a crash between 2 and 3 the blobs are unreferenced and go with the next eviction.
//
// Thread safety: every method may be called from any thread. Stop waits for the removal in
// progress to reach a blob boundary and leaves the rest queued work undone.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/digest/sha256.h"
#include "core/log/logger.h"
#include "node-agent/eviction/eviction_metrics.h"
#include "node-agent/store/cache_store.h"
#include "node-agent/store/view_guard.h"

namespace modelplane::agent {

// Metric label and log value of why a revision went.
inline constexpr std::string_view kEvictedForWatermark = "watermark";
inline constexpr std::string_view kEvictedForAdmission = "admission";
inline constexpr std::string_view kEvictedRevoked = "revoked";
inline constexpr std::string_view kEvictedUnreferenced = "unreferenced";

struct EvictionOrder {
  core::Sha256Bytes digest{};  // zero: only the blobs (unreferenced ones)
  std::string name;            // "namespace/name" when known, for logs and Events
  std::set<core::Sha256Bytes> blobs;
  std::uint64_t bytes = 0;  // what the plan expects the blobs to free
  std::string reason;       // kEvicted*
  bool force = false;       // revoked and forced: removed even while mounted
};

struct EvictionProgress {
  std::string reason;
  std::uint64_t bytes = 0;        // planned
  std::uint64_t bytes_freed = 0;  // so far
  bool running = false;
};

struct EvictionResult {
  core::Sha256Bytes digest{};
  std::string name;
  std::string reason;
  std::uint64_t bytes_freed = 0;
  bool evicted = false;  // false: skipped (kept for a reason found at the last moment) or failed
  std::string problem;   // why not
};

class Evictor {
 public:
  struct Dependencies {
    CacheStore& store;
    const core::Clock& clock;         // paces deletions
    ViewGuard* view_guard = nullptr;  // null without the CSI plugin
    // Asked just before a revision goes: false keeps it (it became protected since the plan).
    std::function<bool(const core::Sha256Bytes&)> may_evict;
    const EvictionMetrics* metrics = nullptr;
    const core::Logger* logger = nullptr;
    std::function<void()> on_change;  // a revision started or finished evicting
  };
  struct Options {
    std::uint64_t delete_bytes_per_second = 0;
  };

  Evictor(Dependencies dependencies, Options options);
  Evictor(const Evictor&) = delete;
  Evictor& operator=(const Evictor&) = delete;
  ~Evictor();

  // Queues orders for revisions not queued or running already.
  void Enqueue(std::vector<EvictionOrder> orders);
  // Queued or running, by revision digest (the zero digest for unreferenced blobs).
  [[nodiscard]] std::map<core::Sha256Bytes, EvictionProgress> InProgress() const;
  [[nodiscard]] bool Idle() const;
  // What finished since the last call.
  [[nodiscard]] std::vector<EvictionResult> TakeFinished();
  void Stop();

 private:
  void Work();
  [[nodiscard]] EvictionResult Execute(const EvictionOrder& order);
  bool Pace(std::uint64_t bytes);
  void Notify() const;

  const Dependencies dependencies_;
  const Options options_;
  core::CancellationToken stop_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<EvictionOrder> queue_;
  std::map<core::Sha256Bytes, EvictionProgress> in_progress_;
  std::vector<EvictionResult> finished_;
  bool stopping_ = false;
  std::jthread worker_;
};

}  // namespace modelplane::agent
