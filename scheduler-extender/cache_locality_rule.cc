#include "scheduler-extender/cache_locality_rule.h"

#include <algorithm>

#include "core/api/model_cache.h"

namespace modelplane::extender {
namespace {

constexpr std::int64_t kScoreReady = 10;
constexpr std::int64_t kScoreStagingBase = 1;
constexpr std::int64_t kScoreStagingSpan = 8;

// 1 + floor(8 * part / whole), in floating point because 8 * part overflows int64 past 1 EiB;
// a part never rounds up to the complete score.
std::int64_t PartialScore(std::int64_t part, std::int64_t whole) {
  if (whole <= 0) return kScoreStagingBase;
  const std::int64_t done = std::clamp<std::int64_t>(part, 0, whole);
  const double fraction = static_cast<double>(done) / static_cast<double>(whole);
  std::int64_t steps = static_cast<std::int64_t>(fraction * static_cast<double>(kScoreStagingSpan));
  if (done < whole) steps = std::min(steps, kScoreStagingSpan - 1);
  return kScoreStagingBase + steps;
}

}  // namespace

RuleVerdict CacheLocalityRule::Judge(const NodeContext& context) const {
  const CachedRevisionInfo* held = HeldEntry(context);
  if (held != nullptr && held->state == core::api::kCacheStateReady) return {.score = kScoreReady};
  if (held != nullptr && (held->state == core::api::kCacheStateStaging ||
                          held->state == core::api::kCacheStatePending)) {
    return {.score =
                PartialScore(std::max(held->bytes_done, context.held_bytes), held->bytes_total)};
  }
  if (context.held_bytes > 0) {
    return {.score = PartialScore(context.held_bytes, context.revision.bytes)};
  }
  return {.score = 0};
}

}  // namespace modelplane::extender
