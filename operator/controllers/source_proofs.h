// Whether a revision's own sources were shown to serve the bytes of its digest, read from the
// nodes' ModelCache statuses (core/api/source_proofs.h says why and how a holder's entry then
// reads for the revision).
// Thread safety: a pure function of the store, which is thread-safe.
#pragma once

#include <string>

#include "core/api/model_cache.h"
#include "core/api/source_proofs.h"
#include "core/kube/object_store.h"
#include "core/kube/parsed_objects.h"

namespace modelplane::controller {

// What the nodes' statuses say of `revision`'s proof for `digest`. `caches` must carry the
// kCachesByHeldDigest index.
[[nodiscard]] core::api::SourceProofs ObserveSourceProofs(
    const core::ObjectStore& caches, core::ParsedObjects<core::api::ModelCache>& parsed,
    const std::string& digest, const core::api::RevisionReference& revision);

}  // namespace modelplane::controller
