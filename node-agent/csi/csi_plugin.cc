#include "node-agent/csi/csi_plugin.h"

namespace modelplane::agent {

CsiPlugin::CsiPlugin(Dependencies dependencies, CsiPluginOptions options,
                     std::unique_ptr<VolumePublisher> publisher)
    : options_(std::move(options)),
      publisher_(std::move(publisher)),
      identity_(options_.version,
                [&resolver = dependencies.resolver] { return resolver.RevisionsSynced(); }),
      node_(options_.node_id, *publisher_, dependencies.logger),
      registration_(options_.socket_path, dependencies.logger.WithComponent("node-agent.csi")) {}

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
  const core::Logger logger = dependencies.logger.WithComponent("node-agent.csi");
  auto server = CsiServer::Start(
      {.socket_path = plugin->options_.socket_path, .max_threads = plugin->options_.max_threads},
      {&plugin->identity_, &plugin->node_}, logger);
  if (!server) return std::unexpected(server.error());
  plugin->server_ = std::move(*server);
  // kubelet dials the CSI socket as soon as it sees this one, so it comes second.
  if (!plugin->options_.registration_socket_path.empty()) {
    auto registration = CsiServer::Start(
        // kubelet makes one call at a time, but gRPC's sync server counts its pollers against
        // the quota: with 2, a NotifyRegistrationStatus right after GetInfo was sometimes
        // refused "Server Threadpool Exhausted" (1 in 15 in csi_plugin_root_test).
        {.socket_path = plugin->options_.registration_socket_path, .max_threads = 4},
        {&plugin->registration_}, logger);
    if (!registration) return std::unexpected(registration.error());
    plugin->registration_server_ = std::move(*registration);
  }
  return plugin;
}

CsiPlugin::~CsiPlugin() {
  Stop();
}

void CsiPlugin::Stop() {
  if (registration_server_) registration_server_->Stop();
  if (server_) server_->Stop();
}

}  // namespace modelplane::agent
