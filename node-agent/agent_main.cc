// modelplane-node-agent: keeps the node's verified model cache and streams weights to GPUs.
//
//   modelplane-node-agent run [--config F ...]   the node's daemon (also: flags without a command)
//   modelplane-node-agent fetch | verify | gc     standalone cache tools
//   modelplane-node-agent serve-peers             serve a cache root's blobs to peers
//   modelplane-node-agent manifest                build a ModelRevision from a folder or S3 prefix
//   modelplane-node-agent stream                  load a checkpoint into memory (or GPUs)
#include <cstdio>
#include <exception>
#include <string_view>

#include "core/runtime/component_main.h"
#include "node-agent/agent_app.h"
#include "node-agent/cli/subcommand.h"
#include "node-agent/commands/fetch_command.h"
#include "node-agent/commands/store_commands.h"
#include "node-agent/loader/stream_command.h"
#include "node-agent/manifest/manifest_command.h"
#include "node-agent/peer/serve_peers_command.h"

namespace {

int RunDaemon(int argc, char** argv) {
  return modelplane::core::RunComponentMain<modelplane::agent::AgentConfig>(
      argc, argv, "node-agent", "modelplane node agent: verified model cache for one node",
      modelplane::agent::RunAgent);
}

bool IsDaemonInvocation(int argc, char** argv) {
  if (argc < 2) return true;
  const std::string_view first = argv[1];
  if (first == "run") return true;
  // The daemon's own flags without "run", as the chart's DaemonSet passes them.
  return first.starts_with("--") && first != "--help" && first != "--version";
}

}  // namespace

int main(int argc, char** argv) {
  // Errors come back as values; this catches what a library throws (CLI11 building the
  // command line, an allocation), so that it is reported instead of ending in std::terminate.
  try {
    if (IsDaemonInvocation(argc, argv)) {
      const bool named = argc >= 2 && std::string_view(argv[1]) == "run";
      return named ? RunDaemon(argc - 1, argv + 1) : RunDaemon(argc, argv);
    }
    CLI::App app{"modelplane node agent: the node's verified model cache, its peers and loader",
                 "modelplane-node-agent"};
    app.require_subcommand(1);
    app.set_version_flag("--version", modelplane::core::kModelplaneVersion);
    app.add_subcommand("run", "Run the node's daemon (flags: run --help)");
    const modelplane::agent::Subcommand commands[] = {
        modelplane::agent::AddFetchCommand(app),    modelplane::agent::AddVerifyCommand(app),
        modelplane::agent::AddGcCommand(app),       modelplane::agent::AddServePeersCommand(app),
        modelplane::agent::AddManifestCommand(app), modelplane::agent::AddStreamCommand(app),
    };
    CLI11_PARSE(app, argc, argv);
    for (const auto& command : commands) {
      if (command.app->parsed()) return command.run();
    }
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "modelplane-node-agent: %s\n", error.what());
    return 1;
  }
}
