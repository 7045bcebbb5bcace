// `modelplane-node-agent stream`: loads a checkpoint with the streaming loader and prints its
// throughput and statistics (a table on a terminal, one JSON object per rank with --json);
// --metrics-file PATH also writes them as Prometheus metrics (loader_metrics.h), replaced by
// rename for node-exporter's textfile collector.
//
//   modelplane-node-agent stream /models/llama --device cpu --world-size 4 --all-ranks
//     --rule '*.q_proj.weight=split:0' --rule '*.o_proj.weight=split:1' --json
//
// Exit codes: 0 loaded, 1 the load failed, 2 bad flags.
// Thread safety: the returned Subcommand runs on the thread that calls `run`.
#pragma once

#include <CLI/CLI.hpp>

#include "node-agent/cli/subcommand.h"

namespace modelplane::agent {

[[nodiscard]] Subcommand AddStreamCommand(CLI::App& parent);

}  // namespace modelplane::agent
