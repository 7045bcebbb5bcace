// How `modelplane-node-agent` subcommands (run, fetch, verify, gc, serve-peers, manifest, stream)
// plug into one CLI11 program. Each module offers `Subcommand AddXCommand(CLI::App& parent)`: it
// declares the subcommand and its flags on `parent` and returns what runs it after parsing. The
// options live in state captured by `run`, so nothing is global.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace modelplane::agent {

struct Subcommand {
  CLI::App* app = nullptr;
  // Runs after a successful parse when `app->parsed()`; returns the process exit code
  // (0 success, 1 the operation failed, 2 bad usage or configuration).
  std::function<int()> run;
};

}  // namespace modelplane::agent
