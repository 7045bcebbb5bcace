#include "scheduler-extender/cache_room_rule.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/api/model_cache.h"

namespace modelplane::extender {
namespace {

constexpr std::int64_t kScoreNoEviction = 10;
constexpr std::int64_t kScoreEvictsHot = 1;
constexpr std::int64_t kScoreColdBase = 2;
constexpr std::int64_t kScoreColdSpan = 7;

// The bytes the node must still store for the revision: 0 when it holds or stages it already.
std::int64_t LackingBytes(const NodeContext& context) {
  if (const CachedRevisionInfo* held = HeldEntry(context);
      held != nullptr && (held->state == core::api::kCacheStateReady ||
                          held->state == core::api::kCacheStateStaging)) {
    return 0;
  }
  return std::max<std::int64_t>(0, context.revision.bytes - context.held_bytes);
}

}  // namespace

RuleVerdict CacheRoomRule::Judge(const NodeContext& context) const {
  if (context.cache == nullptr || context.cache->capacity_bytes <= 0) return {};  // unknown
  const NodeCacheInfo& cache = *context.cache;
  const std::int64_t lacking = LackingBytes(context);
  const std::int64_t free_bytes = cache.FreeBytes();
  if (lacking > free_bytes + cache.reclaimable_bytes) {
    return {
        .reason = fmt::format("modelplane: model cache has {} bytes free and {} it could "
                              "evict, revision {} needs {}",
                              free_bytes, cache.reclaimable_bytes, context.revision.key, lacking),
        .score = 0};
  }
  return {.score = RoomScore(cache, lacking)};
}

std::int64_t CacheRoomRule::RoomScore(const NodeCacheInfo& cache, std::int64_t lacking) const {
  const std::int64_t limit =
      cache.high_watermark_bytes > 0 ? cache.high_watermark_bytes : cache.capacity_bytes;
  const std::int64_t below_limit =
      std::max<std::int64_t>(0, limit - cache.used_bytes - cache.reserved_bytes);
  if (lacking <= below_limit) return kScoreNoEviction;

  const std::int64_t need = lacking - below_limit;
  const auto hot_since = clock_.WallNow() - hot_window_;
  std::int64_t freed = 0;
  for (const EvictableRevision& victim : cache.evictable) {
    if (freed >= need) break;
    if (victim.last_used && *victim.last_used >= hot_since) return kScoreEvictsHot;
    freed += victim.unique_bytes;
  }
  if (freed < need || cache.reclaimable_bytes <= 0) return kScoreEvictsHot;
  const double kept =
      1.0 - static_cast<double>(need) / static_cast<double>(cache.reclaimable_bytes);
  return kScoreColdBase + static_cast<std::int64_t>(std::clamp(kept, 0.0, 1.0) *
                                                    static_cast<double>(kScoreColdSpan));
}

}  // namespace modelplane::extender
