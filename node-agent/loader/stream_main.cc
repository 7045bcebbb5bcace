// A standalone `stream` for the benchmark and for engines' hosts without the node agent:
// the same subcommand the agent offers as `modelplane-node-agent stream`.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "node-agent/loader/stream_command.h"

int main(int argc, char** argv) {
  // Errors come back as values; this catches what a library throws (CLI11 building the
  // command line, an allocation), so that it is reported instead of ending in std::terminate.
  try {
    CLI::App app("modelplane-stream: load a safetensors checkpoint and print throughput");
    app.require_subcommand(1);
    const modelplane::agent::Subcommand stream = modelplane::agent::AddStreamCommand(app);
    CLI11_PARSE(app, argc, argv);
    return stream.app->parsed() ? stream.run() : 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "modelplane-stream: %s\n", error.what());
    return 1;
  }
}
