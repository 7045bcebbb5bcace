// `modelplane-node-agent verify` (re-hash published blobs; a bad one goes to quarantine and the
// revisions naming it stop being ready) and `modelplane-node-agent gc` (remove revisions that are
// no longer wanted, then blobs no revision names, abandoned stagings and the quarantine). Both
// take the cache root's lock, so they refuse to run beside a live agent on the same root.
// Exit codes: 0 clean, 1 problems found or the operation failed, 2 bad usage.
#pragma once

#include "node-agent/cli/subcommand.h"

namespace modelplane::agent {

[[nodiscard]] Subcommand AddVerifyCommand(CLI::App& parent);
[[nodiscard]] Subcommand AddGcCommand(CLI::App& parent);

}  // namespace modelplane::agent
