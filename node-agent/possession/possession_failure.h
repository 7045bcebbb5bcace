// What ModelCache status says of a revision whose sources did not prove they serve the bytes
// the node holds: a fixed reason code and a fixed message per reason. The error itself names
// sources, the host's blob paths and offsets; it stays in the agent's log (event
// possession_not_proven), and status carries nothing a tenant could learn another's files from.
// Thread safety: a pure function.
#pragma once

#include <string>

#include "core/error/error.h"

namespace modelplane::agent {

struct PossessionFailure {
  std::string reason;  // core::api::kCacheReason*
  std::string message;
};

[[nodiscard]] PossessionFailure DescribePossessionFailure(const core::Error& error);

}  // namespace modelplane::agent
