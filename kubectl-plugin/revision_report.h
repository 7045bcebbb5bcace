// `kubectl modelplane status REVISION`: a ModelRevision's phase, digest, node counts, bytes
// fetched per tier and from origins, and conditions, then one row per node that holds or is
// asked to hold it (state, tier that served it, bytes, bytes-to-ready, why it is wanted). Fields
// status does not carry print as "unknown"; nothing is estimated.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/api/timestamp.h"
#include "core/error/error.h"
#include "kubectl-plugin/revision_copies.h"

namespace modelplane::cli {

// `revision` is the object as the API server returned it. Fails only when it is not a
// ModelRevision the types can read; unreadable caches are listed at the end instead.
[[nodiscard]] core::Result<std::string> RenderRevisionStatus(const nlohmann::json& revision,
                                                             const CacheListing& caches,
                                                             core::api::Timestamp now);

}  // namespace modelplane::cli
