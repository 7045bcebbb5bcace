// SourceFactory: how a component that reads a revision's files gets the sources its spec names
// (remote sources and shared filesystems, never peers). The stager fetches through them; the
// possession prover asks them for samples of bytes the node already holds.
//
// It lives beside LoadedRevision rather than in node-agent/fetch: node_agent_revision builds on
// node_agent_fetch, so a fetch header naming LoadedRevision would make the two depend on each
// other.
// Thread safety: a type alias; what a factory may be called from is up to its owner.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/error/error.h"
#include "node-agent/fetch/range_source.h"
#include "node-agent/revision/loaded_revision.h"

namespace modelplane::agent {

// Builds the sources the revision's spec names (remote sources and shared filesystems).
using SourceFactory = std::function<core::Result<std::vector<std::unique_ptr<RangeSource>>>(
    const LoadedRevision& revision)>;

}  // namespace modelplane::agent
