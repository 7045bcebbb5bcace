#include "node-agent/eviction/retention_policy.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace modelplane::agent {
namespace {

enum class Role {
  kKept,         // protected, or not in the store: its blobs stay
  kEvictable,    // stored, unprotected, not revoked
  kPurgeable,    // revoked, and nothing uses it (or forced)
  kRevokedInUse  // revoked but mounted: withheld, not removed yet
};

ProtectionSet EffectiveProtection(const RetentionCandidate& candidate) {
  ProtectionSet protection = candidate.protection;
  if (candidate.stored && !candidate.refetch.peer_in_zone && candidate.refetch.origin_down) {
    protection.Add(Protection::kLastZoneCopy);
  }
  return protection;
}

Role RoleOf(const RetentionCandidate& candidate, ProtectionSet protection) {
  if (candidate.revoked) {
    return candidate.force_purge || !protection.Has(Protection::kInUse) ? Role::kPurgeable
                                                                        : Role::kRevokedInUse;
  }
  if (candidate.stored && protection.empty()) return Role::kEvictable;
  return Role::kKept;
}

std::uint64_t Saturating(std::uint64_t a, std::uint64_t b) {
  return a > b ? a - b : 0;
}

struct Entry {
  const RetentionCandidate* candidate = nullptr;
  std::set<core::Sha256Bytes> blobs;  // distinct, published
  ProtectionSet protection;
  Role role = Role::kKept;
};

// The candidates the evictor is not already removing, with their published blobs.
class Index {
 public:
  explicit Index(const RetentionInput& input) : input_(input) {
    for (const RetentionCandidate& candidate : input.revisions) {
      if (input.evicting.contains(candidate.digest)) continue;
      Entry entry{.candidate = &candidate, .protection = EffectiveProtection(candidate)};
      entry.role = RoleOf(candidate, entry.protection);
      for (const BlobRef& blob : candidate.blobs) {
        if (input.store_blobs.contains(blob.digest)) entry.blobs.insert(blob.digest);
      }
      entries_.push_back(std::move(entry));
    }
  }

  [[nodiscard]] const std::vector<Entry>& entries() const { return entries_; }
  [[nodiscard]] std::uint64_t SizeOf(const core::Sha256Bytes& blob) const {
    const auto found = input_.store_blobs.find(blob);
    return found == input_.store_blobs.end() ? 0 : found->second;
  }
  // How many of the entries whose role passes `counts` name each blob.
  template <typename Filter>
  [[nodiscard]] std::map<core::Sha256Bytes, int> References(Filter counts) const {
    std::map<core::Sha256Bytes, int> references;
    for (const Entry& entry : entries_) {
      if (!counts(entry)) continue;
      for (const core::Sha256Bytes& blob : entry.blobs) ++references[blob];
    }
    return references;
  }
  [[nodiscard]] std::uint64_t UniqueBytes(
      const Entry& entry, const std::map<core::Sha256Bytes, int>& references) const {
    std::uint64_t bytes = 0;
    for (const core::Sha256Bytes& blob : entry.blobs) {
      const auto found = references.find(blob);
      if (found != references.end() && found->second == 1) bytes += SizeOf(blob);
    }
    return bytes;
  }
  [[nodiscard]] double ValuePerByte(const RetentionCandidate& candidate, std::uint64_t unique,
                                    double uses) const {
    if (unique == 0) return std::numeric_limits<double>::infinity();
    return uses * RefetchSeconds(candidate.refetch, input_.refetch, unique) /
           static_cast<double>(unique);
  }

 private:
  const RetentionInput& input_;
  std::vector<Entry> entries_;
};

bool Before(const RetentionCandidate& a, double a_value, const RetentionCandidate& b,
            double b_value) {
  if (a_value != b_value) return a_value < b_value;
  if (a.uses != b.uses) return a.uses < b.uses;
  if (a.last_used != b.last_used) return a.last_used < b.last_used;  // never used: oldest
  return a.digest < b.digest;
}

// Greedy: the lowest value per byte first, unique bytes recomputed after each pick, until
// `need` bytes are freed. `references` counts every entry that keeps blobs (not purgeable); it
// is updated as victims go. `below` stops at the first candidate worth at least that much.
std::vector<Victim> SelectVictims(const Index& index, std::map<core::Sha256Bytes, int> references,
                                  std::uint64_t need, std::uint64_t& freed,
                                  double below = std::numeric_limits<double>::infinity()) {
  std::vector<Victim> victims;
  std::vector<const Entry*> pool;
  for (const Entry& entry : index.entries()) {
    if (entry.role == Role::kEvictable) pool.push_back(&entry);
  }
  while (freed < need && !pool.empty()) {
    std::size_t best = pool.size();
    double best_value = 0;
    std::uint64_t best_unique = 0;
    for (std::size_t at = 0; at < pool.size(); ++at) {
      const std::uint64_t unique = index.UniqueBytes(*pool[at], references);
      if (unique == 0) continue;  // frees nothing alone; may once a sharer has gone
      const double value =
          index.ValuePerByte(*pool[at]->candidate, unique, pool[at]->candidate->uses);
      if (best == pool.size() ||
          Before(*pool[at]->candidate, value, *pool[best]->candidate, best_value)) {
        best = at;
        best_value = value;
        best_unique = unique;
      }
    }
    if (best == pool.size() || best_value >= below) break;
    const Entry& chosen = *pool[best];
    Victim victim{.digest = chosen.candidate->digest, .value_per_byte = best_value};
    for (const core::Sha256Bytes& blob : chosen.blobs) {
      if (--references[blob] == 0) victim.blobs.insert(blob);
    }
    victim.bytes = best_unique;
    freed += best_unique;
    victims.push_back(std::move(victim));
    pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(best));
  }
  return victims;
}

// Published blobs no entry that keeps blobs names.
Victim Unreferenced(const RetentionInput& input,
                    const std::map<core::Sha256Bytes, int>& references) {
  Victim victim;
  for (const auto& [blob, size] : input.store_blobs) {
    if (references.contains(blob)) continue;
    victim.blobs.insert(blob);
    victim.bytes += size;
  }
  return victim;
}

bool KeepsBlobs(const Entry& entry) {
  return entry.role != Role::kPurgeable;
}

std::uint64_t FreeBytes(const RetentionInput& input, const WatermarkBytes& cache) {
  const std::uint64_t usage = input.used_bytes + input.reserved_bytes;
  std::uint64_t free = std::min(Saturating(cache.limit, usage), input.filesystem_available_bytes);
  if (input.filesystem) {
    const WatermarkBytes fs = ToBytes(input.watermarks, input.filesystem->size_bytes);
    free = std::min(free, Saturating(fs.limit, input.filesystem->used_bytes));
  }
  return free;
}

}  // namespace

RetentionPlan PlanRetention(const RetentionInput& input) {
  const Index index(input);
  RetentionPlan plan;
  plan.watermarks = ToBytes(input.watermarks, input.capacity_bytes);
  plan.usage_bytes = input.used_bytes + input.reserved_bytes;
  plan.free_bytes = FreeBytes(input, plan.watermarks);

  const auto all = index.References([](const Entry&) { return true; });
  const auto keeping = index.References(KeepsBlobs);
  const auto kept = index.References([](const Entry& entry) {
    return entry.role == Role::kKept || entry.role == Role::kRevokedInUse;
  });
  const auto not_revoked =
      index.References([](const Entry& entry) { return !entry.candidate->revoked; });

  std::set<core::Sha256Bytes> protected_blobs;
  for (const Entry& entry : index.entries()) {
    const std::uint64_t unique = index.UniqueBytes(entry, all);
    plan.accounts[entry.candidate->digest] = RevisionAccount{
        .digest = entry.candidate->digest,
        .unique_bytes = unique,
        .protection = entry.protection,
        .value_per_byte = index.ValuePerByte(*entry.candidate, unique, entry.candidate->uses),
        .evictable = entry.role == Role::kEvictable};
    if (!entry.protection.empty() && entry.role != Role::kPurgeable) {
      protected_blobs.insert(entry.blobs.begin(), entry.blobs.end());
    }
  }
  for (const core::Sha256Bytes& blob : protected_blobs) plan.protected_bytes += index.SizeOf(blob);
  for (Protection protection : kAllProtections) {
    std::set<core::Sha256Bytes> blobs;
    for (const Entry& entry : index.entries()) {
      if (entry.protection.Has(protection) && entry.role != Role::kPurgeable) {
        blobs.insert(entry.blobs.begin(), entry.blobs.end());
      }
    }
    std::uint64_t bytes = 0;
    for (const core::Sha256Bytes& blob : blobs) bytes += index.SizeOf(blob);
    plan.protected_bytes_by_class[protection] = bytes;
  }
  for (const auto& [blob, size] : input.store_blobs) {
    if (!kept.contains(blob)) plan.reclaimable_bytes += size;
  }

  // Revoked: withheld from peers at once; purged once nothing uses them.
  for (const Entry& entry : index.entries()) {
    if (!entry.candidate->revoked) continue;
    for (const core::Sha256Bytes& blob : entry.blobs) {
      if (!not_revoked.contains(blob)) plan.withheld_blobs.insert(blob);
    }
    if (entry.role != Role::kPurgeable) continue;
    Victim purge{.digest = entry.candidate->digest};
    for (const core::Sha256Bytes& blob : entry.blobs) {
      if (keeping.contains(blob)) continue;
      purge.blobs.insert(blob);
      purge.bytes += index.SizeOf(blob);
    }
    plan.purges.push_back(std::move(purge));
  }

  const WatermarkBytes& cache = plan.watermarks;
  plan.above_high = plan.usage_bytes > cache.high;
  std::uint64_t need = plan.usage_bytes > cache.low ? plan.usage_bytes - cache.low : 0;
  if (input.filesystem) {
    const WatermarkBytes fs = ToBytes(input.watermarks, input.filesystem->size_bytes);
    if (input.filesystem->used_bytes > fs.high) plan.above_high = true;
    need = std::max(need, Saturating(input.filesystem->used_bytes, fs.low));
  }
  if (!plan.above_high) return plan;
  plan.bytes_to_free = need;
  Victim orphans = Unreferenced(input, keeping);
  // Purges free bytes too, whatever the watermarks: count them before choosing victims.
  std::uint64_t freed = 0;
  for (const Victim& purge : plan.purges) freed += purge.bytes;
  if (!orphans.blobs.empty()) {
    freed += orphans.bytes;
    plan.victims.push_back(std::move(orphans));
  }
  auto chosen = SelectVictims(index, keeping, need, freed);
  plan.bytes_planned = freed;
  for (Victim& victim : chosen) plan.victims.push_back(std::move(victim));
  return plan;
}

AdmissionDecision DecideAdmission(const RetentionInput& input, const AdmissionRequest& request) {
  const Index index(input);
  AdmissionDecision decision;
  const WatermarkBytes cache = ToBytes(input.watermarks, input.capacity_bytes);
  decision.free_bytes = FreeBytes(input, cache);
  if (request.bytes_needed <= decision.free_bytes) return decision;
  const std::uint64_t shortfall = request.bytes_needed - decision.free_bytes;

  const auto keeping = index.References(KeepsBlobs);
  std::uint64_t freed = 0;
  Victim orphans = Unreferenced(input, keeping);
  if (!orphans.blobs.empty()) {
    freed += orphans.bytes;
    decision.victims.push_back(std::move(orphans));
  }
  const double incoming =
      request.bytes_needed == 0
          ? std::numeric_limits<double>::infinity()
          : request.uses * RefetchSeconds(request.refetch, input.refetch, request.bytes_needed) /
                static_cast<double>(request.bytes_needed);
  const double below = request.speculative ? incoming : std::numeric_limits<double>::infinity();
  auto chosen = SelectVictims(index, keeping, shortfall, freed, below);
  for (Victim& victim : chosen) decision.victims.push_back(std::move(victim));
  if (freed >= shortfall) {
    decision.outcome = AdmissionDecision::Outcome::kEvictFirst;
    decision.message = fmt::format(
        "waiting for {} bytes to be evicted: needs {} bytes, {} free below the admission limit",
        shortfall, request.bytes_needed, decision.free_bytes);
    return decision;
  }
  decision.outcome = AdmissionDecision::Outcome::kRefuse;
  // What all evictable revisions together would free, to say why it is not enough.
  std::uint64_t reclaimable = 0;
  SelectVictims(index, keeping, std::numeric_limits<std::uint64_t>::max(), reclaimable);
  reclaimable += Unreferenced(input, keeping).bytes;
  std::string protected_text;
  for (Protection protection : kAllProtections) {
    std::set<core::Sha256Bytes> blobs;
    for (const Entry& entry : index.entries()) {
      if (entry.protection.Has(protection) && entry.candidate->digest != request.digest) {
        blobs.insert(entry.blobs.begin(), entry.blobs.end());
      }
    }
    std::uint64_t bytes = 0;
    for (const core::Sha256Bytes& blob : blobs) bytes += index.SizeOf(blob);
    if (bytes > 0) {
      protected_text += fmt::format("{}{} {}", protected_text.empty() ? "" : ", ",
                                    ProtectionName(protection), bytes);
    }
  }
  if (protected_text.empty()) protected_text = "none";
  if (request.speculative && reclaimable >= shortfall) {
    decision.message = fmt::format(
        "needs {} bytes, {} free below the admission limit; a prestage does not displace "
        "revisions worth more per byte than itself ({} of {} reclaimable bytes are worth less)",
        request.bytes_needed, decision.free_bytes, freed, reclaimable);
  } else {
    decision.message = fmt::format(
        "needs {} bytes, {} free below the admission limit and {} reclaimable without evicting "
        "protected revisions (protected bytes: {})",
        request.bytes_needed, decision.free_bytes, reclaimable, protected_text);
  }
  decision.victims.clear();
  return decision;
}

}  // namespace modelplane::agent
