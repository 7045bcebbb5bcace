// The node agent's retention, run by the control loop on every pass (docs/eviction.md): it
// turns what the loop saw (the revisions this node holds, stages or is asked for, which are in
// use, pinned, wanted, revoked, what peers hold) into a RetentionPlan, and acts on it:
//   - Admit: a staging goes only if it fits, possibly after evicting unprotected revisions
//     (queued first, the staging admitted on a later pass), else it is refused;
//   - EndPass: revoked revisions' blobs withheld from peers at once and purged once unmounted
//     (at once with the purge annotation); above the high watermark, victims queued on the
//     Evictor down to the low one; metrics; what status reports per revision.
// It owns the use history (frequency and last use, persisted in the cache root).
//
// A pass: BeginPass(facts), Admit(...) for each revision to stage in priority order, EndPass().
// Thread safety: the pass methods from the control loop's single worker; MayEvict from the
// evictor's thread.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/clock/clock.h"
#include "core/log/logger.h"
#include "node-agent/eviction/eviction_metrics.h"
#include "node-agent/eviction/evictor.h"
#include "node-agent/eviction/retention_policy.h"
#include "node-agent/eviction/use_history.h"
#include "node-agent/fetch/source_health.h"
#include "node-agent/fetch/source_throughput.h"
#include "node-agent/store/cache_store.h"

namespace modelplane::agent {

struct RetentionSettings {
  bool enabled = true;
  WatermarkSettings watermarks;
  RefetchSettings refetch;
  UseHistoryOptions uses;
  // An origin whose last range failed less than this ago, with no success since, looks down.
  std::chrono::seconds origin_down_window{600};
  // lastUsed in status moves in steps of this, so a pod serving for hours does not rewrite
  // status on every pass.
  std::chrono::seconds last_used_resolution{300};
  std::filesystem::path use_history_file;  // empty: not persisted
};

// One revision as the control loop sees it on a pass.
struct RevisionFacts {
  core::Sha256Bytes digest{};
  std::string name;  // "namespace/name" (the first one naming the digest), for logs and Events
  std::vector<ManifestFile> files;
  std::vector<std::string> origin_sources;  // "<type>/<name>" as the fetch engine names them
  bool stored = false;
  bool revoked = false;
  bool force_purge = false;
  ProtectionSet protection;     // inUse, reserved, pinned, wanted
  std::set<std::string> users;  // pod uids and mount targets using it now
  bool peer_in_zone = false;
  bool peer_elsewhere = false;
  std::optional<core::Clock::WallTime> published;  // stored: when its manifest was written
};

// What status says about one revision.
struct RetentionAccount {
  std::uint64_t unique_bytes = 0;
  std::vector<std::string> protection;
  std::optional<core::Clock::WallTime> last_used;
  // Set while the evictor has it, or (revoked) while any of its bytes remain.
  std::optional<std::string> evicting_reason;  // kCacheReason*
  std::uint64_t bytes_held = 0;                // revoked: bytes still on disk
  std::string message;
};

struct RetentionSummary {
  std::map<core::Sha256Bytes, RetentionAccount> accounts;
  WatermarkBytes watermarks;
  std::uint64_t reclaimable_bytes = 0;
  std::uint64_t protected_bytes = 0;
  std::vector<EvictionResult> finished;  // evictions that completed since the last pass
  bool evicting = false;                 // the evictor has work
};

class CacheRetention {
 public:
  struct Dependencies {
    CacheStore& store;
    Evictor* evictor = nullptr;
    const EvictionMetrics* metrics = nullptr;
    // Replaces the blobs the peer server answers 404 for (WithheldBlobCatalog::SetWithheld).
    std::function<void(std::set<core::Sha256Bytes>)> withhold_from_peers;
    const SourceHealth* health = nullptr;
    const SourceThroughput* throughput = nullptr;
    const core::Logger& logger;
    const core::Clock& clock;
  };

  CacheRetention(const Dependencies& dependencies, RetentionSettings settings);
  ~CacheRetention();  // saves the use history

  [[nodiscard]] bool enabled() const { return settings_.enabled; }
  [[nodiscard]] const Watermarks& watermarks() const { return watermarks_; }

  void BeginPass(std::vector<RevisionFacts> revisions);
  // A revision the loop would stage now (not stored, not staging already). Admitted ones count
  // as reserved for the rest of the pass.
  [[nodiscard]] AdmissionDecision Admit(const core::Sha256Bytes& digest, bool speculative);
  // Bytes the stager has queued but the store has not reserved yet (counted as reserved).
  void AddPendingBytes(std::uint64_t bytes) { pending_bytes_ += bytes; }
  [[nodiscard]] RetentionSummary EndPass();

  // False while the latest pass found the revision protected (or did not know it).
  [[nodiscard]] bool MayEvict(const core::Sha256Bytes& digest) const;

 private:
  [[nodiscard]] RetentionInput Input() const;
  [[nodiscard]] RetentionCandidate Candidate(const RevisionFacts& facts) const;
  void SaveHistory(bool now);

  const Dependencies dependencies_;
  const RetentionSettings settings_;
  const Watermarks watermarks_;
  const bool kubelet_shared_;
  UseHistory history_;
  bool history_dirty_ = false;
  core::Clock::SteadyTime history_saved_{};

  // The pass in progress.
  std::map<core::Sha256Bytes, RevisionFacts> facts_;
  std::uint64_t pending_bytes_ = 0;

  mutable std::mutex evictable_mutex_;
  std::set<core::Sha256Bytes> evictable_;  // from the latest plan
};

}  // namespace modelplane::agent
