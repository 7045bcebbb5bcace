#include "scheduler-extender/cache_locality_rule.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/api/model_cache.h"

namespace modelplane::extender {
namespace {

constexpr std::int64_t kScoreReady = 10;
constexpr std::int64_t kScoreStagingBase = 1;
constexpr std::int64_t kScoreStagingSpan = 8;

const CachedRevisionInfo* Held(const NodeContext& context) {
  return context.cache == nullptr ? nullptr : context.cache->Find(context.revision.digest);
}

}  // namespace

std::optional<std::string> CacheLocalityRule::Filter(const NodeContext& context) const {
  const NodeCacheInfo* cache = context.cache;
  if (cache == nullptr || cache->capacity_bytes <= 0) return std::nullopt;
  if (const CachedRevisionInfo* held = Held(context);
      held != nullptr && (held->state == core::api::kCacheStateReady ||
                          held->state == core::api::kCacheStateStaging)) {
    return std::nullopt;
  }
  const std::int64_t free_bytes = cache->FreeBytes();
  if (free_bytes >= context.revision.bytes) return std::nullopt;
  return fmt::format("modelplane: model cache has {} bytes free, revision {} needs {}", free_bytes,
                     context.revision.key, context.revision.bytes);
}

std::optional<std::int64_t> CacheLocalityRule::Score(const NodeContext& context) const {
  const CachedRevisionInfo* held = Held(context);
  if (held == nullptr) return 0;
  if (held->state == core::api::kCacheStateReady) return kScoreReady;
  if (held->state == core::api::kCacheStateStaging ||
      held->state == core::api::kCacheStatePending) {
    if (held->bytes_total <= 0) return kScoreStagingBase;
    const std::int64_t done = std::clamp<std::int64_t>(held->bytes_done, 0, held->bytes_total);
    // 1 + floor(8 * done / total), in floating point because 8 * done overflows int64 past
    // 1 EiB; a partial revision never rounds up to the complete score.
    const double fraction = static_cast<double>(done) / static_cast<double>(held->bytes_total);
    std::int64_t steps =
        static_cast<std::int64_t>(fraction * static_cast<double>(kScoreStagingSpan));
    if (done < held->bytes_total) steps = std::min(steps, kScoreStagingSpan - 1);
    return kScoreStagingBase + steps;
  }
  return 0;
}

}  // namespace modelplane::extender
