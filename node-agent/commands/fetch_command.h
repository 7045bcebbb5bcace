// `modelplane-node-agent fetch`: stages one ModelRevision manifest into a cache root from the
// revision's own sources (and optional peers), standalone, for debugging and for benchmarks.
// Prints a progress line on a terminal and the fetch report as JSON on stdout at the end.
// Exit codes: 0 ready, 1 the fetch failed, 2 bad usage or configuration.
#pragma once

#include "node-agent/cli/subcommand.h"

namespace modelplane::agent {

[[nodiscard]] Subcommand AddFetchCommand(CLI::App& parent);

}  // namespace modelplane::agent
