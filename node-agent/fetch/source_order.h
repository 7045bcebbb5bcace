// The order the fetch engine tries a revision's sources in: peers first (the closest verified
// copies), then shared filesystems, then remote origins and object stores in the order the
// manifest lists them. One rule for the daemon and the standalone `fetch` command.
// Thread safety: a pure function.
#pragma once

#include <memory>
#include <vector>

#include "node-agent/fetch/range_source.h"

namespace modelplane::agent {

// Stable: within a rank the given order holds.
void SortByTierPreference(std::vector<std::unique_ptr<RangeSource>>& sources);

// The fetch engine's order for one blob, lowest first: peers that hold it (this zone's, then
// others'), shared filesystems, origins and object stores, and last the peers still staging it
// (Kraken's handout order: complete peers, the origin, incomplete peers).
[[nodiscard]] int SourceRank(const RangeSource& source, const core::Sha256Bytes& blob);

}  // namespace modelplane::agent
