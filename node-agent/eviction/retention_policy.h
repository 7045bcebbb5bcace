// What the node's cache keeps and what it evicts, as a pure function of what it holds, what
// uses it and what fetching it again would cost (docs/eviction.md). No I/O and no clock: the
// caller passes every fact, including the uses aged to now, so it is unit-tested alone.
//
// Value per byte (GreedyDual-Size-Frequency, priced in this fleet's refetch time):
//     value = uses x refetch_seconds(unique bytes) / unique bytes
// where uses is the aged score (use_history.h), refetch_seconds comes from refetch_cost.h (a
// copy a same-zone peer holds is cheap, an origin-only one expensive), and unique bytes are the
// revision's blobs that no other revision the node keeps references: what evicting it frees.
//
// PlanRetention: above the high watermark, victims are taken lowest value per byte first until
// the cache is at the low one, recomputing unique bytes after each pick (evicting one of two
// revisions that share a blob frees nothing of it; evicting the second then frees it). Blobs
// nothing references (left by a crash, or by a staging no longer wanted) go first. Protected
// revisions (protection.h) are never victims, and a blob any kept revision references is never
// removed. Revoked revisions are purged whatever the watermarks, once nothing uses them (or at
// once when forced), and their blobs are withheld from peers meanwhile.
//
// DecideAdmission: a staging that fits below the admission limit goes; one that fits only by
// evicting is admitted once those victims are gone (the caller evicts them first); one that
// cannot fit without touching protected revisions is refused. A speculative staging (prestage)
// may displace only revisions worth less per byte than itself (TinyLFU's admission rule).
//
// Thread safety: pure functions and value types.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/digest/sha256.h"
#include "node-agent/eviction/protection.h"
#include "node-agent/eviction/refetch_cost.h"
#include "node-agent/eviction/watermarks.h"

namespace modelplane::agent {

struct BlobRef {
  core::Sha256Bytes digest{};
  std::uint64_t size = 0;
};

struct RetentionCandidate {
  core::Sha256Bytes digest{};
  std::vector<BlobRef> blobs;  // the files it names (duplicates are fine)
  // Its manifest is in the store (Ready). Candidates that are not (being staged, wanted) still
  // keep their blobs.
  bool stored = false;
  ProtectionSet protection;  // the caller's classes; the policy adds kLastZoneCopy
  bool revoked = false;
  bool force_purge = false;  // revoked and forced: purged even while in use
  double uses = 0;           // aged score now
  std::optional<std::chrono::system_clock::time_point> last_used;  // ties: older goes first
  RefetchFacts refetch;
};

struct FilesystemFill {
  std::uint64_t size_bytes = 0;
  std::uint64_t used_bytes = 0;  // everything on it, the cache included
};

struct RetentionInput {
  std::vector<RetentionCandidate> revisions;
  std::map<core::Sha256Bytes, std::uint64_t> store_blobs;  // published blobs and sizes
  std::uint64_t capacity_bytes = 0;
  std::uint64_t used_bytes = 0;
  std::uint64_t reserved_bytes = 0;  // stagings in flight, and admitted ones not yet reserved
  std::uint64_t filesystem_available_bytes = UINT64_MAX;
  // Present when kubelet shares the filesystem: the watermarks apply to it too.
  std::optional<FilesystemFill> filesystem;
  Watermarks watermarks;
  RefetchSettings refetch;
  // Revisions the evictor is removing already: counted as gone.
  std::set<core::Sha256Bytes> evicting;
};

struct RevisionAccount {
  core::Sha256Bytes digest{};
  std::uint64_t unique_bytes = 0;
  ProtectionSet protection;
  double value_per_byte = 0;
  bool evictable = false;
};

struct Victim {
  core::Sha256Bytes digest{};         // zero for the unreferenced blobs
  std::set<core::Sha256Bytes> blobs;  // what removing it deletes
  std::uint64_t bytes = 0;
  double value_per_byte = 0;
};

struct RetentionPlan {
  std::map<core::Sha256Bytes, RevisionAccount> accounts;  // every candidate
  WatermarkBytes watermarks;                              // of the cache's capacity
  std::uint64_t usage_bytes = 0;                          // used + reserved
  bool above_high = false;
  std::uint64_t bytes_to_free = 0;
  std::uint64_t bytes_planned = 0;
  // Watermark eviction in order: the unreferenced blobs first (digest zero), then revisions.
  std::vector<Victim> victims;
  std::vector<Victim> purges;                  // revoked: purge now
  std::set<core::Sha256Bytes> withheld_blobs;  // referenced only by revoked revisions
  std::uint64_t reclaimable_bytes = 0;         // what evicting every evictable revision would free
  std::uint64_t protected_bytes = 0;  // blobs some protected revision references, once each
  std::map<Protection, std::uint64_t> protected_bytes_by_class;
  std::uint64_t free_bytes = 0;  // below the admission limit (and what the filesystem has)
};

[[nodiscard]] RetentionPlan PlanRetention(const RetentionInput& input);

struct AdmissionRequest {
  core::Sha256Bytes digest{};
  std::uint64_t bytes_needed = 0;  // CacheStore::BytesToStage
  bool speculative = false;        // reason prestage: no pod is waiting for it
  double uses = 1;                 // what it is expected to be worth (its aged score, or 1)
  RefetchFacts refetch;
};

struct AdmissionDecision {
  enum class Outcome { kAdmit, kEvictFirst, kRefuse };
  Outcome outcome = Outcome::kAdmit;
  std::vector<Victim> victims;  // kEvictFirst: evict these, then stage
  std::uint64_t free_bytes = 0;
  std::string message;  // kEvictFirst and kRefuse: why, with the figures
};

// `input` must list the requested revision as a (not stored) candidate, so the blobs it shares
// with victims stay.
[[nodiscard]] AdmissionDecision DecideAdmission(const RetentionInput& input,
                                                const AdmissionRequest& request);

}  // namespace modelplane::agent
