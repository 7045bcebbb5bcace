#include "node-agent/agent_app.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/kube/kube_config.h"
#include "core/runtime/kube_connection.h"
#include "node-agent/controller/node_controller.h"
#include "node-agent/controller/stager.h"
#include "node-agent/fetch/fetch_engine.h"
#include "node-agent/fetch/source_order.h"
#include "node-agent/peer/peer_range_source.h"
#include "node-agent/peer/peer_server.h"
#include "node-agent/sources/revision_sources.h"
#include "node-agent/store/cache_store.h"

namespace modelplane::agent {
namespace {

std::string AdvertisedEndpoint(const PeerConfig& peers, std::uint16_t port) {
  std::string host = peers.advertise_address;
  if (host.empty()) host = core::ProcessEnvironment("POD_IP").value_or("");
  if (host.empty()) host = peers.listen_address;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return fmt::format("{}:{}", host, port);
}

}  // namespace

int RunAgent(const AgentConfig& config, core::ComponentRuntime& runtime) {
  const core::Logger& logger = runtime.logger();
  std::string node = config.node_name;
  if (node.empty()) node = core::ProcessEnvironment("NODE_NAME").value_or("");
  if (node.empty()) {
    logger.Error("node_name_missing",
                 {{"hint", "set nodeName in the config or NODE_NAME from the downward API"}});
    return 2;
  }
  auto store = CacheStore::Open({.root = config.cache_root,
                                 .capacity_bytes = config.capacity.bytes,
                                 .allow_direct_io = config.direct_io});
  if (!store) {
    logger.Error("cache_open_failed",
                 {{"root", config.cache_root}, {"error", store.error().ToString()}});
    return 1;
  }
  const RecoveryReport& recovery = (*store)->recovery();
  logger.Info("cache_opened", {{"root", config.cache_root},
                               {"blobs", recovery.blobs},
                               {"revisions", recovery.revisions},
                               {"resumable_partials", recovery.resumable_partials},
                               {"dropped_partials", recovery.dropped_partials},
                               {"dropped_revisions", recovery.dropped_revisions}});

  std::optional<PeerTokenKey> token_key;
  if (!config.peers.token_key_file.empty()) {
    auto key = PeerTokenKey::Load(config.peers.token_key_file);
    if (!key) {
      logger.Error("peer_token_key_failed", {{"error", key.error().ToString()}});
      return 2;
    }
    token_key = std::move(*key);
  }
  std::unique_ptr<PeerServer> peer_server;
  std::string peer_endpoint;
  const bool peer_credentials = token_key.has_value() || !config.peers.client_ca_file.empty();
  if (config.peers.enabled && !peer_credentials) {
    // Serving unauthenticated is never right, and refusing to start would take the node's
    // staging down with it: stage from sources only and say why.
    logger.Warn("peer_serving_disabled",
                {{"reason", "no peer credentials: set peers.tokenKeyFile or peers.clientCaFile"}});
  }
  if (config.peers.enabled && peer_credentials) {
    PeerServerOptions options{.address = config.peers.listen_address,
                              .port = config.peers.port,
                              .token_key = token_key,
                              .allow_plain_http = config.peers.plain_http,
                              .max_upload_bytes_per_second = config.peers.max_upload_rate.bytes,
                              .max_streams = static_cast<std::size_t>(config.peers.max_streams)};
    if (!config.peers.plain_http) {
      options.tls =
          core::TlsServerOptions{.certificate_chain_file = config.peers.tls_certificate_file,
                                 .private_key_file = config.peers.tls_key_file,
                                 .client_ca_file = config.peers.client_ca_file};
    }
    auto server =
        PeerServer::Create(std::move(options), **store, runtime.metrics(), logger, runtime.clock());
    if (!server) {
      logger.Error("peer_server_failed", {{"error", server.error().ToString()}});
      return 1;
    }
    peer_server = std::move(*server);
    peer_endpoint = AdvertisedEndpoint(config.peers, peer_server->port());
    logger.Info("peer_server_listening", {{"endpoint", peer_endpoint}});
  }

  auto metrics = FetchMetrics::Register(runtime.metrics());
  if (!metrics) {
    logger.Error("metrics_registration_failed", {{"error", metrics.error().ToString()}});
    return 1;
  }
  SourceHealth health(runtime.clock(), std::chrono::minutes(5));
  auto engine = FetchEngine::Create(
      {.range_size = config.fetch.range_size.bytes,
       .max_in_flight = static_cast<std::size_t>(config.fetch.in_flight),
       .files_in_flight = static_cast<std::size_t>(config.fetch.files_in_flight),
       .buffer_pool_bytes = config.fetch.buffer_pool.bytes,
       .range_timeout = config.fetch.range_timeout},
      {.store = store->get(),
       .health = &health,
       .metrics = &*metrics,
       .logger = &logger,
       .clock = &runtime.clock()});
  if (!engine) {
    logger.Error("fetch_engine_failed", {{"error", engine.error().ToString()}});
    return 2;
  }
  metrics->Store((*store)->Usage());

  auto connection = core::ConnectAndLog(config.kubernetes, runtime.clock(), logger);
  if (!connection) return 1;
  if (auto self = connection->client->Get(core::resources::Nodes(), "", node); !self) {
    logger.Error("node_lookup_failed", {{"node", node}, {"error", self.error().ToString()}});
    return 1;
  }

  NodeController controller({.client = *connection->client,
                             .watcher = *connection->watcher,
                             .store = **store,
                             .logger = logger,
                             .clock = runtime.clock()},
                            {.node_name = node,
                             .peer_endpoint = peer_endpoint,
                             .status_interval = config.status_interval,
                             .resync_period = config.resync_period});
  const SourceEnvironment environment{.secrets_directory = config.secrets_directory};
  SourceFactory sources = [&](const LoadedRevision& revision)
      -> core::Result<std::vector<std::unique_ptr<RangeSource>>> {
    std::vector<std::unique_ptr<RangeSource>> result;
    for (const std::string& endpoint : controller.PeersHolding(revision.digest)) {
      if (endpoint == peer_endpoint) continue;
      PeerRangeSourceOptions options{.endpoint = endpoint, .token_key = token_key};
      if (!config.peers.plain_http) {
        options.tls =
            core::TlsClientOptions{.ca_file = config.peers.client_ca_file,
                                   .certificate_chain_file = config.peers.tls_certificate_file,
                                   .private_key_file = config.peers.tls_key_file};
      }
      auto peer = PeerRangeSource::Create(std::move(options), runtime.clock());
      if (peer) result.push_back(std::move(*peer));
    }
    auto spec_sources = CreateRevisionSources(revision.revision.spec.sources, environment);
    if (!spec_sources) return std::unexpected(spec_sources.error());
    for (auto& source : *spec_sources) result.push_back(std::move(source));
    SortByTierPreference(result);
    return result;
  };
  Stager stager({.engine = engine->get(),
                 .sources = sources,
                 .logger = &logger,
                 .clock = &runtime.clock(),
                 .on_change = [&controller] { controller.Poke(); }},
                config.fetch.concurrent_stagings);
  controller.SetStager(&stager);
  if (controller.Start(runtime.shutdown())) {
    runtime.SetReady(true);
    logger.Info("node_agent_running", {{"node", node}, {"cache_root", config.cache_root}});
    while (runtime.shutdown().SleepFor(std::chrono::seconds(5))) {
      metrics->Store((*store)->Usage());
    }
  }
  runtime.SetReady(false);
  stager.Stop();
  controller.Stop();
  if (peer_server) peer_server->Stop();
  logger.Info("node_agent_stopped", {{"node", node}});
  return 0;
}

}  // namespace modelplane::agent
