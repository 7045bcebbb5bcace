#include "node-agent/controller/cache_retention.h"

#include <algorithm>

#include <fmt/format.h>
#include <sys/statvfs.h>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"

namespace modelplane::agent {
namespace {

constexpr auto kHistorySaveInterval = std::chrono::seconds(10);

std::string StatusReason(std::string_view evicted_for) {
  if (evicted_for == kEvictedRevoked) return std::string(core::api::kCacheReasonRevoked);
  if (evicted_for == kEvictedForAdmission) return std::string(core::api::kCacheReasonMakingRoom);
  return std::string(core::api::kCacheReasonHighWatermark);
}

std::optional<FilesystemFill> Fill(const std::filesystem::path& root) {
  struct statvfs info {};
  if (::statvfs(root.c_str(), &info) != 0) return std::nullopt;
  const std::uint64_t size = static_cast<std::uint64_t>(info.f_blocks) * info.f_frsize;
  const std::uint64_t free = static_cast<std::uint64_t>(info.f_bfree) * info.f_frsize;
  return FilesystemFill{.size_bytes = size, .used_bytes = size > free ? size - free : 0};
}

}  // namespace

CacheRetention::CacheRetention(const Dependencies& dependencies, RetentionSettings settings)
    : dependencies_(dependencies),
      settings_(std::move(settings)),
      watermarks_(EffectiveWatermarks(
          settings_.watermarks,
          ResolveKubeletSharing(settings_.watermarks, dependencies.store.layout().root()))),
      kubelet_shared_(watermarks_.kubelet_shared),
      history_(settings_.uses) {
  if (!settings_.use_history_file.empty()) {
    if (auto loaded = history_.Load(settings_.use_history_file); !loaded) {
      dependencies_.logger.Warn(
          "use_history_unreadable",
          {{"file", settings_.use_history_file.string()}, {"error", loaded.error().ToString()}});
    }
  }
  dependencies_.logger.Info("retention_configured", {{"enabled", settings_.enabled},
                                                     {"high_percent", watermarks_.high_percent},
                                                     {"low_percent", watermarks_.low_percent},
                                                     {"limit_percent", watermarks_.limit_percent},
                                                     {"kubelet_shared", kubelet_shared_}});
}

CacheRetention::~CacheRetention() {
  SaveHistory(true);
}

void CacheRetention::SaveHistory(bool now) {
  if (!history_dirty_ || settings_.use_history_file.empty()) return;
  const auto at = dependencies_.clock.Now();
  if (!now && at - history_saved_ < kHistorySaveInterval) return;
  if (auto saved = history_.Save(settings_.use_history_file); !saved) {
    dependencies_.logger.Warn("use_history_save_failed", {{"error", saved.error().ToString()}});
    return;
  }
  history_dirty_ = false;
  history_saved_ = at;
}

void CacheRetention::BeginPass(std::vector<RevisionFacts> revisions) {
  const auto now = dependencies_.clock.WallNow();
  facts_.clear();
  pending_bytes_ = 0;
  for (RevisionFacts& facts : revisions) {
    if (facts.stored && facts.published) {
      history_dirty_ |= history_.Known(facts.digest, *facts.published);
    }
    if (facts.stored || !facts.users.empty()) {
      history_dirty_ |= history_.Observe(facts.digest, facts.users, now);
    }
    const core::Sha256Bytes digest = facts.digest;
    facts_.insert_or_assign(digest, std::move(facts));
  }
}

RetentionCandidate CacheRetention::Candidate(const RevisionFacts& facts) const {
  const auto now = dependencies_.clock.WallNow();
  RetentionCandidate candidate{.digest = facts.digest,
                               .stored = facts.stored,
                               .protection = facts.protection,
                               .revoked = facts.revoked,
                               .force_purge = facts.force_purge,
                               .uses = history_.Score(facts.digest, now),
                               .last_used = history_.LastUsed(facts.digest)};
  for (const ManifestFile& file : facts.files) {
    candidate.blobs.push_back({.digest = file.sha256, .size = file.size});
  }
  candidate.refetch.peer_in_zone = facts.peer_in_zone;
  candidate.refetch.peer_elsewhere = facts.peer_elsewhere;
  if (dependencies_.throughput != nullptr) {
    candidate.refetch.peer_bytes_per_second =
        dependencies_.throughput->TierBytesPerSecond(core::api::kTierPeer);
    for (const std::string& source : facts.origin_sources) {
      auto measured = dependencies_.throughput->SourceBytesPerSecond(source);
      if (!measured)
        measured = dependencies_.throughput->TierBytesPerSecond(
            std::string_view(source).substr(0, source.find('/')));
      if (measured && (!candidate.refetch.origin_bytes_per_second ||
                       *measured > *candidate.refetch.origin_bytes_per_second)) {
        candidate.refetch.origin_bytes_per_second = measured;
      }
    }
  }
  // Down when every source it names looks down. A revision no ModelRevision names any more has
  // no origin to be down: nobody asks for it, so it is not anyone's last copy.
  candidate.refetch.origin_down =
      dependencies_.health != nullptr && !facts.origin_sources.empty() &&
      std::ranges::all_of(facts.origin_sources, [&](const std::string& source) {
        return dependencies_.health->LooksDown(source, settings_.origin_down_window);
      });
  return candidate;
}

RetentionInput CacheRetention::Input() const {
  const SpaceUsage usage = dependencies_.store.Usage();
  RetentionInput input{.store_blobs = dependencies_.store.BlobSizes(),
                       .capacity_bytes = usage.capacity_bytes,
                       .used_bytes = usage.used_bytes,
                       .reserved_bytes = usage.reserved_bytes + pending_bytes_,
                       .filesystem_available_bytes = usage.filesystem_available_bytes,
                       .watermarks = watermarks_,
                       .refetch = settings_.refetch};
  if (kubelet_shared_) input.filesystem = Fill(dependencies_.store.layout().root());
  for (const auto& [digest, facts] : facts_) input.revisions.push_back(Candidate(facts));
  if (dependencies_.evictor != nullptr) {
    for (const auto& [digest, progress] : dependencies_.evictor->InProgress()) {
      input.evicting.insert(digest);
    }
  }
  return input;
}

AdmissionDecision CacheRetention::Admit(const core::Sha256Bytes& digest, bool speculative) {
  auto found = facts_.find(digest);
  if (found == facts_.end()) return {};
  RevisionFacts& facts = found->second;
  const std::uint64_t needed = dependencies_.store.BytesToStage(facts.files);
  if (!settings_.enabled) {
    facts.protection.Add(Protection::kReserved);
    pending_bytes_ += needed;
    return {};
  }
  const RetentionInput input = Input();
  const RetentionCandidate candidate = Candidate(facts);
  AdmissionDecision decision = DecideAdmission(
      input, {.digest = digest,
              .bytes_needed = needed,
              .speculative = speculative,
              .uses = std::max(1.0, history_.Score(digest, dependencies_.clock.WallNow())),
              .refetch = candidate.refetch});
  switch (decision.outcome) {
    case AdmissionDecision::Outcome::kAdmit:
      facts.protection.Add(Protection::kReserved);
      pending_bytes_ += needed;
      break;
    case AdmissionDecision::Outcome::kEvictFirst: {
      facts.protection.Add(Protection::kReserved);  // its shared blobs stay while room is made
      if (dependencies_.evictor == nullptr) break;
      if (!input.evicting.empty()) {
        decision.message = "waiting for the evictions in progress to finish; " + decision.message;
        break;
      }
      std::vector<EvictionOrder> orders;
      for (const Victim& victim : decision.victims) {
        const auto named = facts_.find(victim.digest);
        orders.push_back(
            {.digest = victim.digest,
             .name = named == facts_.end() ? "" : named->second.name,
             .blobs = victim.blobs,
             .bytes = victim.bytes,
             .reason = std::string(victim.digest == core::Sha256Bytes{} ? kEvictedUnreferenced
                                                                        : kEvictedForAdmission)});
      }
      dependencies_.logger.Info("eviction_for_staging", {{"digest", core::FormatDigest(digest)},
                                                         {"revision", facts.name},
                                                         {"victims", orders.size()},
                                                         {"bytes_needed", needed}});
      dependencies_.evictor->Enqueue(std::move(orders));
      break;
    }
    case AdmissionDecision::Outcome::kRefuse:
      if (dependencies_.metrics != nullptr) dependencies_.metrics->Refused();
      break;
  }
  return decision;
}

bool CacheRetention::MayEvict(const core::Sha256Bytes& digest) const {
  std::lock_guard lock(evictable_mutex_);
  return evictable_.contains(digest);
}

RetentionSummary CacheRetention::EndPass() {
  RetentionSummary summary;
  const RetentionInput input = Input();
  const RetentionPlan plan = PlanRetention(input);
  {
    std::lock_guard lock(evictable_mutex_);
    evictable_.clear();
    for (const auto& [digest, account] : plan.accounts) {
      if (account.evictable) evictable_.insert(digest);
    }
  }
  if (dependencies_.withhold_from_peers) dependencies_.withhold_from_peers(plan.withheld_blobs);
  if (dependencies_.metrics != nullptr) {
    dependencies_.metrics->Withheld(plan.withheld_blobs.size());
    dependencies_.metrics->Protected(plan.protected_bytes_by_class);
    dependencies_.metrics->Space(plan.watermarks, plan.free_bytes, plan.reclaimable_bytes);
  }
  if (dependencies_.evictor != nullptr) {
    std::vector<EvictionOrder> orders;
    for (const Victim& purge : plan.purges) {
      const RevisionFacts& facts = facts_.at(purge.digest);
      orders.push_back({.digest = purge.digest,
                        .name = facts.name,
                        .blobs = purge.blobs,
                        .bytes = purge.bytes,
                        .reason = std::string(kEvictedRevoked),
                        .force = facts.force_purge});
    }
    if (settings_.enabled && plan.above_high && input.evicting.empty()) {
      dependencies_.logger.Info("eviction_planned", {{"usage_bytes", plan.usage_bytes},
                                                     {"high_bytes", plan.watermarks.high},
                                                     {"low_bytes", plan.watermarks.low},
                                                     {"bytes_to_free", plan.bytes_to_free},
                                                     {"bytes_planned", plan.bytes_planned},
                                                     {"victims", plan.victims.size()}});
      for (const Victim& victim : plan.victims) {
        const auto named = facts_.find(victim.digest);
        orders.push_back(
            {.digest = victim.digest,
             .name = named == facts_.end() ? "" : named->second.name,
             .blobs = victim.blobs,
             .bytes = victim.bytes,
             .reason = std::string(victim.digest == core::Sha256Bytes{} ? kEvictedUnreferenced
                                                                        : kEvictedForWatermark)});
      }
    }
    if (!orders.empty()) dependencies_.evictor->Enqueue(std::move(orders));
    summary.finished = dependencies_.evictor->TakeFinished();
  }
  const auto in_progress = dependencies_.evictor != nullptr
                               ? dependencies_.evictor->InProgress()
                               : std::map<core::Sha256Bytes, EvictionProgress>{};
  summary.evicting = !in_progress.empty();
  summary.watermarks = plan.watermarks;
  summary.reclaimable_bytes = plan.reclaimable_bytes;
  summary.protected_bytes = plan.protected_bytes;

  const auto resolution =
      std::max<std::chrono::seconds>(settings_.last_used_resolution, std::chrono::seconds(1));
  for (const auto& [digest, facts] : facts_) {
    const auto account = plan.accounts.find(digest);
    if (account == plan.accounts.end()) continue;
    RetentionAccount out{.unique_bytes = account->second.unique_bytes,
                         .protection = account->second.protection.Names()};
    if (auto last = history_.LastUsed(digest)) {
      const auto since_epoch = last->time_since_epoch();
      out.last_used =
          core::Clock::WallTime(std::chrono::duration_cast<core::Clock::WallTime::duration>(
              since_epoch - since_epoch % resolution));
    }
    if (const auto evicting = in_progress.find(digest); evicting != in_progress.end()) {
      out.evicting_reason = StatusReason(evicting->second.reason);
      // No byte counts here: status is rewritten at once when a message changes.
      out.message = evicting->second.running ? "evicting" : "queued for eviction";
    }
    if (facts.revoked) {
      out.evicting_reason = std::string(core::api::kCacheReasonRevoked);
      out.bytes_held = account->second.unique_bytes;
      if (facts.stored || out.bytes_held > 0) {
        if (in_progress.contains(digest)) {
          out.message = "revoked: withheld from peers, purging";
        } else if (!facts.users.empty() && !facts.force_purge) {
          out.message = fmt::format(
              "revoked: withheld from peers; the purge waits for {} user(s) to stop using it "
              "(or the {}={} annotation)",
              facts.users.size(), core::api::kPurgeAnnotation, core::api::kPurgeForce);
        } else {
          out.message = "revoked: withheld from peers, purge queued";
        }
      } else {
        continue;  // nothing left of it here
      }
    }
    summary.accounts.emplace(digest, std::move(out));
  }
  SaveHistory(false);
  return summary;
}

}  // namespace modelplane::agent
