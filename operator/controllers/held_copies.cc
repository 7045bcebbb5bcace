#include "operator/controllers/held_copies.h"

#include <algorithm>

#include "core/api/model_cache.h"
#include "operator/controllers/cache_entries.h"

namespace modelplane::controller {

std::vector<HeldCopy> HeldCopiesOf(const core::ObjectStore& caches, const std::string& digest) {
  std::vector<HeldCopy> held;
  for (const core::ObjectPtr& cache_object : caches.ByIndex(kCachesByHeldDigest, digest)) {
    auto cache = api::ModelCacheFromJson(*cache_object);
    if (!cache || !cache->status) continue;
    for (const api::CachedRevision& cached : cache->status->revisions) {
      if (cached.digest != digest || cached.state == api::kCacheStateFailed) continue;
      const std::int64_t bytes = cached.state == api::kCacheStateReady
                                     ? std::max(cached.bytes_done, cached.bytes_total)
                                     : cached.bytes_done;
      held.push_back({.node = cache->metadata.name, .bytes = bytes});
    }
  }
  return held;
}

void ForEachHeldEntry(
    const core::ObjectStore& caches, core::ParsedObjects<api::ModelCache>& parsed,
    const std::string& digest,
    const std::function<void(const api::ModelCache&, const api::CachedRevision&)>& visit) {
  for (const core::ObjectPtr& object : caches.ByIndex(kCachesByHeldDigest, digest)) {
    const auto cache = parsed.Get(object);
    if (!*cache || !(*cache)->status) continue;
    for (const api::CachedRevision& cached : (*cache)->status->revisions) {
      if (cached.digest == digest) visit(**cache, cached);
    }
  }
}

}  // namespace modelplane::controller
