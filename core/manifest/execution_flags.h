// The command-line flags for a revision's execution fields (engine, model name, parallelism),
// declared once for every command that writes revisions, so they are spelt and checked alike.
// Thread safety: call while building the command line, on one thread.
#pragma once

#include <CLI/CLI.hpp>

#include "core/manifest/revision_builder.h"

namespace modelplane::core {

// --engine (or --engine-name), --engine-version, --model-name, --tensor-parallel, writing into
// `defaults`, which must outlive the parse.
void AddExecutionFlags(CLI::App& command, ExecutionDefaults& defaults);

}  // namespace modelplane::core
