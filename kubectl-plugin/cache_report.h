// `kubectl modelplane cache NODE`: what a node's ModelCache holds. Capacity, used, reserved and
// the eviction watermarks, then one row per revision the node holds or is asked to hold: state,
// bytes, the bytes evicting it would free, why the operator wants it and whether it is pinned,
// and its protection classes (a revision with none is what eviction may take).
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/api/timestamp.h"
#include "core/error/error.h"

namespace modelplane::cli {

// `cache` is the object as the API server returned it. Fails only when it is not a ModelCache
// the types can read.
[[nodiscard]] core::Result<std::string> RenderCache(const nlohmann::json& cache,
                                                    core::api::Timestamp now);

}  // namespace modelplane::cli
