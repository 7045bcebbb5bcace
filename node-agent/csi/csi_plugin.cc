#include "node-agent/csi/csi_plugin.h"

namespace modelplane::agent {

CsiPlugin::CsiPlugin(Dependencies dependencies, CsiPluginOptions options,
                     std::unique_ptr<VolumePublisher> publisher)
    : options_(std::move(options)),
      publisher_(std::move(publisher)),
      identity_(options_.version,
                [&resolver = dependencies.resolver] { return resolver.RevisionsSynced(); }),
      node_(options_.node_id, *publisher_, dependencies.logger) {}

core::Result<std::unique_ptr<CsiPlugin>> CsiPlugin::Start(Dependencies dependencies,
                                                          CsiPluginOptions options) {
  auto publisher = VolumePublisher::Create({.layout = dependencies.layout,
                                            .resolver = dependencies.resolver,
                                            .mounter = dependencies.mounter,
                                            .logger = dependencies.logger,
                                            .clock = dependencies.clock},
                                           options.target_root);
  if (!publisher) return std::unexpected(publisher.error());
  std::unique_ptr<CsiPlugin> plugin(
      new CsiPlugin(dependencies, std::move(options), std::move(*publisher)));
  auto server = CsiServer::Start(
      {.socket_path = plugin->options_.socket_path, .max_threads = plugin->options_.max_threads},
      {&plugin->identity_, &plugin->node_}, dependencies.logger.WithComponent("node-agent.csi"));
  if (!server) return std::unexpected(server.error());
  plugin->server_ = std::move(*server);
  return plugin;
}

CsiPlugin::~CsiPlugin() {
  Stop();
}

void CsiPlugin::Stop() {
  if (server_) server_->Stop();
}

}  // namespace modelplane::agent
