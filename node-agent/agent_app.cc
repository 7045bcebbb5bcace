#include "node-agent/agent_app.h"

#include <algorithm>

#include <boost/asio/ip/address.hpp>
#include <fmt/format.h>

#include "core/api/peer_identity.h"
#include "core/kube/kube_config.h"
#include "core/pki/statement_signature.h"
#include "core/runtime/component_main.h"
#include "core/runtime/kube_connection.h"
#include "node-agent/controller/cache_retention.h"
#include "node-agent/controller/node_controller.h"
#include "node-agent/controller/operator_lease_watch.h"
#include "node-agent/controller/stager.h"
#include "node-agent/csi/csi_plugin.h"
#include "node-agent/csi/system_mounter.h"
#include "node-agent/eviction/eviction_metrics.h"
#include "node-agent/eviction/evictor.h"
#include "node-agent/fetch/fetch_engine.h"
#include "node-agent/fetch/source_admission.h"
#include "node-agent/fetch/source_telemetry.h"
#include "node-agent/fetch/source_throughput.h"
#include "node-agent/peer/peer_certificate_requester.h"
#include "node-agent/peer/peer_range_source.h"
#include "node-agent/peer/peer_server.h"
#include "node-agent/peer/peer_serving.h"
#include "node-agent/peer/withheld_blob_catalog.h"
#include "node-agent/possession/possession_ledger.h"
#include "node-agent/possession/possession_prover.h"
#include "node-agent/sources/operator_credentials.h"
#include "node-agent/sources/revision_sources.h"
#include "node-agent/store/cache_store.h"
#include "node-agent/store/media_probe.h"

namespace modelplane::agent {
namespace {

constexpr std::string_view kZoneLabel = "topology.kubernetes.io/zone";

// The peer server formats its endpoint (and token audience) from this host and its port.
std::string AdvertisedHost(const PeerConfig& peers) {
  std::string host = peers.advertise_address;
  if (host.empty()) host = core::ProcessEnvironment("POD_IP").value_or("");
  if (host.empty()) host = peers.listen_address;
  return host;
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
  auto connection =
      core::ConnectAndLog(config.kubernetes, runtime.clock(), &runtime.shutdown(), logger);
  if (!connection) return 1;
  // This node's own peer certificate, when the operator's signer issues them
  // (peer_serving.h: asked for in the background, so nothing else waits for the signer).
  std::optional<PeerCertificateRequester> certificates;
  if (config.peers.enabled && !config.peers.certificate_directory.empty()) {
    std::vector<std::string> addresses;
    boost::system::error_code not_an_address;
    const std::string advertised = AdvertisedHost(config.peers);
    boost::asio::ip::make_address(advertised, not_an_address);
    if (!not_an_address) addresses.push_back(advertised);
    certificates.emplace(
        *connection->client,
        PeerCertificateRequesterOptions{.node_name = node,
                                        .directory = config.peers.certificate_directory,
                                        .ip_addresses = std::move(addresses),
                                        .requested_lifetime = config.peers.certificate_lifetime,
                                        .wait_timeout = config.peers.certificate_wait},
        logger, runtime.clock());
  }
  // Peers are served the store's blobs less those of revoked revisions (retention says which).
  WithheldBlobCatalog peer_catalog(**store);
  std::optional<PeerServing> peer_serving;
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
                              .advertise_address = AdvertisedHost(config.peers),
                              .token_key = token_key,
                              .allow_plain_http = config.peers.plain_http,
                              .max_upload_bytes_per_second = config.peers.max_upload_rate.bytes,
                              .max_streams = static_cast<std::size_t>(config.peers.max_streams),
                              .max_readers = static_cast<std::size_t>(config.peers.max_readers)};
    if (!config.peers.plain_http) {
      options.tls =
          core::TlsServerOptions{.certificate_chain_file = config.peers.tls_certificate_file,
                                 .private_key_file = config.peers.tls_key_file,
                                 .client_ca_file = config.peers.client_ca_file};
    }
    if (certificates && config.peers.require_tickets) {
      // The operator signs tickets with the CA that signs the nodes' certificates.
      auto verifier = core::StatementVerifier::FromCertificateFile(config.peers.client_ca_file);
      if (!verifier) {
        logger.Error("peer_scope_failed", {{"error", verifier.error().ToString()}});
        return 2;
      }
      options.ticket_verifier =
          std::make_shared<const core::StatementVerifier>(std::move(*verifier));
    }
    peer_serving.emplace(PeerServingOptions{.server = std::move(options),
                                            .requester = certificates ? &*certificates : nullptr},
                         peer_catalog, runtime.metrics(), logger, runtime.clock());
  }

  auto metrics = FetchMetrics::Register(runtime.metrics());
  if (!metrics) {
    logger.Error("metrics_registration_failed", {{"error", metrics.error().ToString()}});
    return 1;
  }
  SourceHealth health(runtime.clock(), std::chrono::minutes(5));
  SourceThroughput throughput;
  SourceAdmission admission(runtime.clock(), {.enabled = config.admission.enabled,
                                              .safe_streams = config.admission.safe_streams,
                                              .start_grace = config.admission.start_grace,
                                              .first_grant_wait = config.admission.first_grant_wait,
                                              .follower_grace = config.admission.follower_grace});
  SourceTelemetryRecorder telemetry(runtime.clock(), config.admission.telemetry_window);
  // Unlimited until the controller sees serving pods (serving_protection.h); 8 MiB of burst
  // lets a range land without waiting.
  core::ByteThrottle write_throttle(0, 8ull << 20, runtime.clock());
  std::int64_t media_bandwidth = 0;
  if (config.admission.media_probe.bytes > 0) {
    auto measured = MeasureWriteBandwidth((*store)->layout().TemporaryDirectory(),
                                          config.admission.media_probe.bytes);
    if (measured) {
      media_bandwidth = *measured;
      logger.Info("media_bandwidth_measured",
                  {{"bytes_per_second", media_bandwidth},
                   {"probe_bytes", config.admission.media_probe.bytes}});
    } else {
      logger.Warn("media_probe_failed", {{"error", measured.error().ToString()}});
    }
  }
  auto engine = FetchEngine::Create(
      {.range_size = config.fetch.range_size.bytes,
       .max_in_flight = static_cast<std::size_t>(config.fetch.in_flight),
       .files_in_flight = static_cast<std::size_t>(config.fetch.files_in_flight),
       .buffer_pool_bytes = config.fetch.buffer_pool.bytes,
       .range_timeout = config.fetch.range_timeout,
       .goodput_window = config.fetch.goodput_window,
       .min_goodput = config.fetch.min_goodput.bytes},
      {.store = store->get(),
       .health = &health,
       .metrics = &*metrics,
       .logger = &logger,
       .clock = &runtime.clock(),
       .admission = &admission,
       .telemetry = &telemetry,
       .write_throttle = &write_throttle});
  if (!engine) {
    logger.Error("fetch_engine_failed", {{"error", engine.error().ToString()}});
    return 2;
  }
  metrics->Store((*store)->Usage());

  auto self = connection->client->Get(core::resources::Nodes(), "", node);
  if (!self) {
    logger.Error("node_lookup_failed", {{"node", node}, {"error", self.error().ToString()}});
    return 1;
  }
  // Read once: a node's zone does not change while it runs.
  const std::string zone = self->value("metadata", nlohmann::json::object())
                               .value("labels", nlohmann::json::object())
                               .value(std::string(kZoneLabel), "");

  NodeController controller(
      {.client = *connection->client,
       .watcher = *connection->watcher,
       .store = **store,
       .logger = logger,
       .clock = runtime.clock(),
       .metrics = &runtime.metrics(),
       .admission = &admission,
       .telemetry = &telemetry,
       .apply_limits =
           [&write_throttle, &peer_serving](const TransferLimits& limits) {
             write_throttle.SetRate(limits.write_bytes_per_second);
             if (peer_serving) peer_serving->SetUploadRate(limits.upload_bytes_per_second);
           }},
      {.node_name = node,
       .zone = zone,
       .status_interval = config.status_interval,
       .resync_period = config.resync_period,
       .retention_interval = config.eviction.interval,
       .source_policy = config.source_policy,
       .media_bandwidth_bytes_per_second = media_bandwidth,
       .serving = {.share = config.admission.serving_share,
                   .media_bytes_per_second = static_cast<std::uint64_t>(media_bandwidth),
                   .network_bytes_per_second = config.admission.network_bandwidth.bytes,
                   .upload_cap = config.peers.max_upload_rate.bytes}});
  SourceEnvironment environment;
  if (!config.credentials.url.empty()) {
    auto secrets = OperatorCredentials::Create(
        {.url = config.credentials.url,
         .token_file = config.credentials.token_file,
         .ca_file = config.credentials.ca_file,
         .ttl = std::chrono::duration_cast<std::chrono::seconds>(config.credentials.ttl),
         .stop = &runtime.shutdown()},
        logger.WithComponent("agent.credentials"));
    if (!secrets) {
      logger.Error("credentials_misconfigured", {{"error", secrets.error().ToString()}});
      return 2;
    }
    environment.secrets = std::move(*secrets);
  }
  PeerSourceFactory peers =
      [&](const PeerCandidate& candidate) -> core::Result<std::unique_ptr<PeerRangeSource>> {
    PeerRangeSourceOptions options{.endpoint = candidate.endpoint,
                                   .token_key = token_key,
                                   .nearby = candidate.nearby,
                                   .holding = candidate.holding};
    if (!config.peers.plain_http) {
      // Until a per-node certificate comes, reads present none (tokens authenticate them).
      const std::string identity = peer_serving ? peer_serving->certificate_file() : "";
      options.tls = core::TlsClientOptions{
          .ca_file = config.peers.client_ca_file,
          .certificate_chain_file = identity,
          .private_key_file = identity.empty() ? std::string() : config.peers.tls_key_file};
      if (certificates) {
        // Key and certificate share the file; and the peer must prove it is the node whose
        // ModelCache advertised the endpoint, not merely some node of the cluster.
        options.tls->private_key_file = identity;
        options.tls->server_name = core::api::PeerIdentityName(candidate.node_name);
      }
    }
    return PeerRangeSource::Create(std::move(options), runtime.clock());
  };
  SourceFactory sources = [&](const LoadedRevision& revision)
      -> core::Result<std::vector<std::unique_ptr<RangeSource>>> {
    const auto& spec = revision.revision.spec;
    auto grants = core::AuthorizeSources(config.source_policy ? &*config.source_policy : nullptr,
                                         revision.revision.metadata.namespace_name, spec.sources);
    if (!grants) return std::unexpected(grants.error());
    return CreateRevisionSources(spec.sources, *grants, environment);
  };
  Stager stager(
      {.engine = engine->get(),
       .sources = sources,
       .peers = peers,
       .logger = &logger,
       .clock = &runtime.clock(),
       .on_change = [&controller] { controller.Poke(); },
       .on_fetched = [&throughput](const FetchReport& report) { throughput.Record(report); },
       .metrics = &*metrics},
      config.fetch.concurrent_stagings);
  controller.SetStager(&stager);
  // Bytes held for one revision serve another of the same digest only once its own sources
  // were shown to serve them (docs/security.md, "Bytes shared across namespaces").
  auto ledger = PossessionLedger::Open((*store)->layout().PossessionLedgerPath(), &logger);
  if (!ledger) {
    logger.Error("possession_ledger_failed", {{"error", ledger.error().ToString()}});
    return 1;
  }
  PossessionProver prover({.sources = sources,
                           .catalog = store->get(),
                           .ledger = ledger->get(),
                           .logger = &logger,
                           .clock = &runtime.clock(),
                           .on_change = [&controller] { controller.Poke(); }});
  controller.SetPossession(ledger->get(), &prover);
  // The CSI plugin listens before the informers sync: kubelet finds the socket at once, Probe
  // says not ready and publishing waits until the controller can answer for revisions.
  SystemMounter mounter;
  std::unique_ptr<CsiPlugin> csi;
  if (config.csi.enabled) {
    auto plugin = CsiPlugin::Start({.layout = (*store)->layout(),
                                    .resolver = controller,
                                    .mounter = mounter,
                                    .logger = logger,
                                    .clock = runtime.clock()},
                                   {.node_id = node,
                                    .version = core::kModelplaneVersion,
                                    .socket_path = config.csi.socket_path,
                                    .registration_socket_path = config.csi.registration_socket_path,
                                    .target_root = config.csi.target_root});
    if (!plugin) {
      logger.Error("csi_plugin_failed", {{"error", plugin.error().ToString()}});
      return 1;
    }
    csi = std::move(*plugin);
    logger.Info("csi_plugin_started", {{"socket", config.csi.socket_path},
                                       {"registration_socket", config.csi.registration_socket_path},
                                       {"target_root", config.csi.target_root},
                                       {"leases", csi->Leases().size()}});
  }
  // Retention: the evictor claims views from the CSI plugin, so it comes after it.
  auto eviction_metrics = EvictionMetrics::Register(runtime.metrics());
  if (!eviction_metrics) {
    logger.Error("metrics_registration_failed", {{"error", eviction_metrics.error().ToString()}});
    return 1;
  }
  CacheRetention* retention_for_evictor = nullptr;
  Evictor evictor({.store = **store,
                   .clock = runtime.clock(),
                   .view_guard = csi ? &csi->view_guard() : nullptr,
                   .may_evict =
                       [&retention_for_evictor](const core::Sha256Bytes& digest) {
                         return retention_for_evictor != nullptr &&
                                retention_for_evictor->MayEvict(digest);
                       },
                   .metrics = &*eviction_metrics,
                   .logger = &logger,
                   .on_change = [&controller] { controller.Poke(); }},
                  {.delete_bytes_per_second = config.eviction.delete_rate.bytes});
  const EvictionConfig& eviction = config.eviction;
  CacheRetention retention({.store = **store,
                            .evictor = &evictor,
                            .metrics = &*eviction_metrics,
                            .withhold_from_peers =
                                [&peer_catalog](std::set<core::Sha256Bytes> blobs) {
                                  peer_catalog.SetWithheld(std::move(blobs));
                                },
                            .health = &health,
                            .throughput = &throughput,
                            .logger = logger,
                            .clock = runtime.clock()},
                           {.enabled = eviction.enabled,
                            .watermarks = ToWatermarkSettings(eviction),
                            .refetch = {.default_peer_bytes_per_second =
                                            static_cast<double>(eviction.default_peer_rate.bytes),
                                        .default_origin_bytes_per_second = static_cast<double>(
                                            eviction.default_origin_rate.bytes)},
                            .uses = {.half_life = eviction.use_half_life},
                            .origin_down_window = eviction.origin_down_window,
                            .last_used_resolution = eviction.last_used_resolution,
                            .use_history_file = (*store)->layout().UseHistoryPath()});
  retention_for_evictor = &retention;
  core::EventRecorder events(
      *connection->client,
      {.reporting_controller = "modelplane.io/node-agent", .reporting_instance = node},
      runtime.clock());
  if (peer_serving) {
    auto serving = peer_serving->Start(
        [&controller](const std::string& endpoint) { controller.SetPeerEndpoint(endpoint); });
    if (!serving) {
      logger.Error("peer_server_failed", {{"error", serving.error().ToString()}});
      return 1;
    }
  }
  std::optional<OperatorLeaseWatch> operator_lease;
  if (config.admission.enabled && !config.admission.operator_lease.name.empty()) {
    const OperatorLeaseConfig& lease = config.admission.operator_lease;
    operator_lease.emplace(*connection->client, admission, logger, runtime.clock(),
                           OperatorLeaseWatchOptions{.lease_namespace = lease.namespace_name,
                                                     .lease_name = lease.name,
                                                     .poll_interval = lease.poll_interval});
    operator_lease->Start();
  }
  controller.SetRetention(
      {.retention = &retention,
       .leases = [&csi]() { return csi ? csi->Leases() : std::vector<VolumeLease>{}; },
       .events = &events});
  if (controller.Start(runtime.shutdown())) {
    runtime.SetReady(true);
    logger.Info("node_agent_running", {{"node", node}, {"cache_root", config.cache_root}});
    if (!config.source_policy) {
      logger.Warn("source_policy_missing",
                  {{"effect", "no revision source is read, only peers"},
                   {"fix", "set sourcePolicy in the agent's config (docs/security.md)"}});
    }
    while (runtime.shutdown().SleepFor(runtime.clock(), std::chrono::seconds(5))) {
      metrics->Store((*store)->Usage());
    }
  }
  runtime.SetReady(false);
  // First: calls in flight finish while the controller they ask is still there.
  if (csi) csi->Stop();
  stager.Stop();
  prover.Stop();
  if (operator_lease) operator_lease->Stop();
  controller.Stop();
  evictor.Stop();  // after the loop: nothing queues more; a removal stops at a blob boundary
  if (peer_serving) peer_serving->Stop();
  logger.Info("node_agent_stopped", {{"node", node}});
  return 0;
}

}  // namespace modelplane::agent
