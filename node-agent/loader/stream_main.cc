// A standalone `stream` for the benchmark and for engines' hosts without the node agent:
// the same subcommand the agent offers as `modelplane-node-agent stream`.
#include <CLI/CLI.hpp>

#include "node-agent/loader/stream_command.h"

int main(int argc, char** argv) {
  CLI::App app("modelplane-stream: load a safetensors checkpoint and print throughput");
  app.require_subcommand(1);
  const modelplane::agent::Subcommand stream = modelplane::agent::AddStreamCommand(app);
  CLI11_PARSE(app, argc, argv);
  return stream.app->parsed() ? stream.run() : 2;
}
