// When a pin lapses under a namespace's pinTtlAfterLastUse (core/api/model_quota.h).
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <optional>

#include "core/api/timestamp.h"

namespace modelplane::controller {

// `ttl` after the revision's last use on the pinned node (its ModelCache status lastUsed);
// where that node reported no use, after its last use on any node; where no node did, after the
// revision was created.
[[nodiscard]] core::api::Timestamp PinLapse(std::optional<core::api::Timestamp> node_last_used,
                                            std::optional<core::api::Timestamp> any_last_used,
                                            core::api::Timestamp created, std::chrono::seconds ttl);

}  // namespace modelplane::controller
