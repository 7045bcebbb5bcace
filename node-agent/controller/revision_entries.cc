#include "node-agent/controller/revision_entries.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/api/limits.h"
#include "core/api/model_revision.h"
#include "core/api/model_revocation.h"
#include "core/api/source_identity.h"

namespace modelplane::agent {
namespace {

std::optional<core::api::Timestamp> ToTimestamp(const std::optional<WallTime>& time) {
  if (!time) return std::nullopt;
  return std::chrono::time_point_cast<std::chrono::microseconds>(*time);
}

std::int64_t TotalBytes(const LoadedRevision& loaded) {
  std::int64_t total = 0;
  for (const auto& file : loaded.revision.spec.files) total += file.size;
  return total;
}

// Tier, timestamps and bytes by tier of a revision the store holds.
void SetReadyOrigin(const WantedRevisionFacts& fact,
                    const std::map<std::string, core::api::CachedRevision>& previous,
                    core::api::CachedRevision& entry) {
  if (fact.staged && fact.staged->phase == StagingPhase::kReady) {
    entry.source_tier = fact.staged->tier;
    entry.timestamps = ToStageTimestamps(fact.staged->times);
    entry.bytes_by_tier = TierBytes(fact.staged->bytes_by_tier);
  } else if (auto before = previous.find(entry.digest);
             before != previous.end() && before->second.state == core::api::kCacheStateReady) {
    entry.source_tier = before->second.source_tier;
    entry.timestamps = before->second.timestamps;
    entry.bytes_by_tier = before->second.bytes_by_tier;
  } else {
    entry.source_tier = core::api::kTierLocal;
    entry.timestamps.published =
        core::api::Timestamp(std::chrono::seconds(fact.manifest->published_unix_seconds));
  }
}

}  // namespace

core::api::StageTimestamps ToStageTimestamps(const StageTimes& times) {
  return {.queued = ToTimestamp(times.queued),
          .first_byte = ToTimestamp(times.first_byte),
          .last_byte = ToTimestamp(times.last_byte),
          .verified = ToTimestamp(times.verified),
          .published = ToTimestamp(times.published)};
}

std::map<std::string, std::int64_t> TierBytes(const std::map<std::string, std::uint64_t>& bytes) {
  std::map<std::string, std::int64_t> out;
  for (const auto& [tier, count] : bytes) {
    if (count > 0) out[tier] = static_cast<std::int64_t>(count);
  }
  return out;
}

WantedRevisionsPlan PlanWantedRevisions(
    const std::vector<WantedRevisionFacts>& facts,
    const std::map<std::string, core::api::CachedRevision>& previous) {
  WantedRevisionsPlan plan;
  std::map<std::string, std::vector<core::api::SourceProof>> proofs;  // by formatted digest
  for (const WantedRevisionFacts& fact : facts) {
    const WantedRevision& wanted = *fact.wanted;
    core::api::CachedRevision entry{.digest = wanted.digest_hint,
                                    .state = std::string(core::api::kCacheStatePending)};
    // Without a readable revision there is no digest of its own: the entry is reported under
    // the operator's hint, or not at all (a gated pod's revision has none).
    if (fact.indexed == nullptr || !fact.indexed->loaded) {
      entry.state = core::api::kCacheStateFailed;
      if (fact.indexed != nullptr) entry.reason = fact.indexed->reason;
      entry.message = fact.indexed == nullptr ? fmt::format("ModelRevision {} not found", fact.key)
                                              : fmt::format("ModelRevision {} is invalid: {}",
                                                            fact.key, fact.indexed->problem);
      if (!entry.digest.empty()) plan.entries[entry.digest] = entry;
      continue;
    }
    const LoadedRevision& loaded = *fact.indexed->loaded;
    if (core::api::IsRevoked(loaded.revision) || fact.digest_revoked) {
      // Never staged; what the node holds of it is purged (retention).
      plan.weights.revoked[fact.key] = core::FormatDigest(loaded.digest);
      continue;
    }
    entry.digest = core::FormatDigest(loaded.digest);
    entry.bytes_total = TotalBytes(loaded);
    // Wanted either way: a staging that just published keeps its stager entry (tier, times).
    plan.wanted_digests.insert(loaded.digest);
    plan.wanted_pins.emplace(loaded.digest, wanted.pinned);
    if (fact.manifest) {
      entry.state = core::api::kCacheStateReady;
      entry.bytes_done = entry.bytes_total;
      SetReadyOrigin(fact, previous, entry);
      if (fact.sources_proven) {
        plan.weights.ready[fact.key] = entry.digest;
      } else {
        plan.weights.unverified[fact.key] = entry.digest;
        plan.to_prove.push_back({fact.key, &loaded});
      }
    } else {
      plan.weights.unverified[fact.key] = entry.digest;
      plan.to_stage.push_back(
          {fact.key, &loaded, wanted.reason, &wanted.peers, &wanted.peer_ticket});
    }
    if (fact.proof && proofs[entry.digest].size() < core::api::kMaxSourceProofs) {
      proofs[entry.digest].push_back(*fact.proof);
    }
    plan.entries[entry.digest] = entry;
  }
  for (auto& [digest, list] : proofs) plan.entries[digest].source_proofs = std::move(list);
  std::stable_sort(plan.to_stage.begin(), plan.to_stage.end(),
                   [](const StagingCandidate& a, const StagingCandidate& b) {
                     return StagingPriority(a.reason) < StagingPriority(b.reason);
                   });
  return plan;
}

bool StagedFromOwnSources(const StagingState& state) {
  if (state.phase != StagingPhase::kReady) return false;
  return std::ranges::all_of(state.bytes_by_tier, [](const auto& tier) {
    return tier.second == 0 || core::api::IsSourceTier(tier.first);
  });
}

void ApplyStagingState(const StagingState& state, core::api::CachedRevision& entry) {
  entry.state = std::string(StagingPhaseName(state.phase));
  entry.bytes_done = static_cast<std::int64_t>(state.bytes_done);
  entry.source_tier = state.tier;
  entry.timestamps = ToStageTimestamps(state.times);
  entry.reason = state.reason;
  entry.message = state.message;
  entry.bytes_by_tier = TierBytes(state.bytes_by_tier);
  if (state.phase == StagingPhase::kStaging && state.goodput_bytes_per_second) {
    entry.goodput_bytes_per_second =
        static_cast<std::int64_t>(std::max(0.0, *state.goodput_bytes_per_second));
    if (state.expected_finish) entry.expected_finish_seconds = state.expected_finish->count();
  }
}

void AddStoreInventory(const std::vector<RevisionManifest>& held,
                       const std::map<std::string, core::api::CachedRevision>& previous,
                       std::map<std::string, core::api::CachedRevision>& entries) {
  for (const RevisionManifest& manifest : held) {
    const std::string digest = core::FormatDigest(manifest.revision_digest);
    if (entries.contains(digest)) continue;
    core::api::CachedRevision entry{.digest = digest,
                                    .state = std::string(core::api::kCacheStateReady),
                                    .bytes_done = static_cast<std::int64_t>(manifest.TotalBytes()),
                                    .bytes_total = static_cast<std::int64_t>(manifest.TotalBytes()),
                                    .source_tier = std::string(core::api::kTierLocal)};
    if (auto before = previous.find(digest); before != previous.end()) {
      entry.source_tier = before->second.source_tier;
      entry.timestamps = before->second.timestamps;
      entry.bytes_by_tier = before->second.bytes_by_tier;
    }
    entries[digest] = entry;
  }
}

RetentionOutcome FoldRetentionSummary(const RetentionSummary& summary, const RevisionIndex& index,
                                      std::map<std::string, core::api::CachedRevision>& entries) {
  RetentionOutcome outcome;
  for (const auto& [digest, account] : summary.accounts) {
    const std::string formatted = core::FormatDigest(digest);
    auto [found, inserted] = entries.try_emplace(formatted);
    core::api::CachedRevision& entry = found->second;
    if (inserted) {
      // Held here without a manifest any more: being evicted, or a revoked remnant.
      entry.digest = formatted;
      if (const LoadedRevision* loaded = index.AnyWithDigest(digest)) {
        entry.bytes_total = TotalBytes(*loaded);
      }
    }
    entry.unique_bytes = static_cast<std::int64_t>(account.unique_bytes);
    entry.protection = account.protection;
    if (account.last_used) {
      entry.last_used = std::chrono::time_point_cast<std::chrono::microseconds>(*account.last_used);
    }
    if (account.evicting_reason) {
      entry.state = core::api::kCacheStateEvicting;
      entry.reason = *account.evicting_reason;
      entry.message = account.message;
      if (entry.reason == core::api::kCacheReasonRevoked) {
        entry.bytes_done = static_cast<std::int64_t>(account.bytes_held);
        entry.source_tier.clear();
      }
      outcome.evicting = true;
    } else if (inserted) {
      entries.erase(found);  // neither held nor evicting: nothing to report
    }
  }
  for (const EvictionResult& result : summary.finished) {
    if (!result.evicted || result.digest == core::Sha256Bytes{}) continue;
    const bool purged = result.reason == kEvictedRevoked;
    outcome.events.push_back(
        {.type = "Normal",
         .reason = purged ? "Purged" : "Evicted",
         .action = purged ? "Purge" : "Evict",
         .note =
             fmt::format("{} {} ({}): {} bytes freed ({})", purged ? "purged revoked" : "evicted",
                         result.name.empty() ? "revision" : result.name,
                         core::FormatDigest(result.digest), result.bytes_freed, result.reason)});
  }
  if (summary.evicting) outcome.evicting = true;
  return outcome;
}

}  // namespace modelplane::agent
