// Which nodes still hold any bytes of a revision digest, read from the ModelCache statuses in
// the informer's store: the purge's progress, for a revoked revision and for a revocation.
// Thread safety: a pure function of the store, which is thread-safe.
#pragma once

#include <string>
#include <vector>

#include "core/kube/object_store.h"
#include "operator/status/revision_status.h"

namespace modelplane::controller {

// One entry per node whose status lists `digest` in any state but Failed (a refused or
// abandoned staging holds nothing): a Ready entry holds all of it, an Evicting one what is left.
// `caches` must carry the kCachesByHeldDigest index.
[[nodiscard]] std::vector<HeldCopy> HeldCopiesOf(const core::ObjectStore& caches,
                                                 const std::string& digest);

}  // namespace modelplane::controller
