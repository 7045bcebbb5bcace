// Which nodes still hold any bytes of a revision digest, read from the ModelCache statuses in
// the informer's store: the purge's progress, for a revoked revision and for a revocation.
// Thread safety: a pure function of the store, which is thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/api/model_cache.h"
#include "core/kube/object_store.h"
#include "core/kube/parsed_objects.h"
#include "operator/status/revision_status.h"

namespace modelplane::controller {

// One entry per node whose status lists `digest` in any state but Failed (a refused or
// abandoned staging holds nothing): a Ready entry holds all of it, an Evicting one what is left.
// `caches` must carry the kCachesByHeldDigest index.
[[nodiscard]] std::vector<HeldCopy> HeldCopiesOf(const core::ObjectStore& caches,
                                                 const std::string& digest);

// Calls `visit` for each status entry of `digest` in every cache whose status lists it, parsed
// through `parsed` (each cache object once). `caches` must carry the kCachesByHeldDigest index.
void ForEachHeldEntry(const core::ObjectStore& caches,
                      core::ParsedObjects<core::api::ModelCache>& parsed, const std::string& digest,
                      const std::function<void(const core::api::ModelCache&,
                                               const core::api::CachedRevision&)>& visit);

}  // namespace modelplane::controller
