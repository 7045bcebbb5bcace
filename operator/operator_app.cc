#include "operator/operator_app.h"

#include <algorithm>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <unistd.h>

#include "core/http/http_server.h"
#include "core/kube/informer.h"
#include "core/kube/leader_elector.h"
#include "core/runtime/kube_connection.h"
#include "operator/certificates/peer_certificate_signer.h"
#include "operator/certificates/peer_ticket_issuer.h"
#include "operator/controllers/controller_manager.h"
#include "operator/credentials/credentials_service.h"
#include "operator/rollouts/rollout_gate_service.h"
#include "operator/webhook/admission_review.h"
#include "operator/webhook/pod_webhook.h"
#include "operator/webhook/revision_webhook.h"

namespace modelplane::controller {
namespace {

// Unique per process: the host (the pod name in a cluster) plus a random suffix, so a restarted
// container never mistakes its predecessor's lease for its own.
std::string CandidateIdentity() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::random_device random;
  return fmt::format("{}_{:08x}", host, random());
}

// The admission webhook and the informer it resolves revisions from; every replica runs one.
struct WebhookServing {
  std::unique_ptr<core::Informer> revisions;
  std::unique_ptr<PodWebhook> webhook;
  std::unique_ptr<RevisionWebhook> revision_webhook;
  std::unique_ptr<CredentialsService> credentials;  // set when credentials.enabled
  std::unique_ptr<core::HttpServer> server;
  std::unique_ptr<core::HttpServer> credentials_server;  // set with credentials.port
  std::thread syncer;

  ~WebhookServing() {
    if (credentials_server) credentials_server->Stop();
    if (server) server->Stop();
    if (revisions) revisions->Stop();
    if (syncer.joinable()) syncer.join();
  }
};

core::Status StartWebhook(const OperatorConfig& config, core::ComponentRuntime& runtime,
                          const core::KubeConnection& connection, WebhookServing& serving) {
  const WebhookConfig& settings = config.webhook;
  serving.revisions = std::make_unique<core::Informer>(
      *connection.client, *connection.watcher,
      core::InformerOptions{.type = core::resources::ModelRevisions(),
                            .namespace_name = config.controllers.namespace_name,
                            .resync_period = config.controllers.resync_period},
      runtime.clock());
  auto webhook = PodWebhook::Create(
      serving.revisions->store(), config.source_policy,
      {.scheduler_name = settings.scheduler_name,
       .volume_mode = settings.volume_mode == "hostPath" ? WeightsVolumeMode::kHostPath
                                                         : WeightsVolumeMode::kCsi,
       .host_cache_root = settings.host_cache_root,
       .namespace_scope = config.controllers.namespace_name},
      runtime.logger().WithComponent("operator.webhook"), runtime.metrics());
  if (!webhook) return std::unexpected(webhook.error());
  serving.webhook = std::move(*webhook);
  // One list per revision created (rare); no ModelQuota CRD served reads as no quota.
  QuotaLookup quotas =
      [&client = *connection.client](
          const std::string& namespace_name) -> core::Result<core::api::NamespaceQuota> {
    auto listed = client.ListAll(core::resources::ModelQuotas(), namespace_name, {});
    if (!listed) {
      if (listed.error().code() == core::ErrorCode::kNotFound) return core::api::NamespaceQuota{};
      return std::unexpected(listed.error());
    }
    std::vector<core::api::ModelQuota> parsed;
    for (const nlohmann::json& item : listed->items) {
      if (auto quota = core::api::ModelQuotaFromJson(item)) parsed.push_back(std::move(*quota));
    }
    return core::api::CombineQuotas(parsed);
  };
  auto revision_webhook = RevisionWebhook::Create(
      config.source_policy, runtime.logger().WithComponent("operator.webhook"), runtime.metrics(),
      std::move(quotas));
  if (!revision_webhook) return std::unexpected(revision_webhook.error());
  serving.revision_webhook = std::move(*revision_webhook);
  core::ServerOptions options;
  options.address = settings.address;
  options.port = settings.port;
  options.threads = settings.threads;
  options.body_limit = kMaxAdmissionReviewBytes;
  options.tls = core::TlsServerOptions{.certificate_chain_file = settings.certificate_file,
                                       .private_key_file = settings.key_file};
  options.readiness = [raw = serving.webhook.get()] { return raw->synced(); };
  core::Router router;
  serving.webhook->AddRoutes(router);
  serving.revision_webhook->AddRoutes(router);
  const CredentialsConfig& credentials_settings = config.credentials;
  // On a listener of its own when a port is set: its threads, and a port a NetworkPolicy can
  // open to the agents alone.
  const bool own_listener = credentials_settings.port.has_value();
  core::Router credentials_router;
  if (credentials_settings.enabled) {
    const int threads = own_listener ? credentials_settings.threads : settings.threads;
    auto credentials = CredentialsService::Create(
        *connection.client,
        {.audience = credentials_settings.audience,
         .agent = {.namespace_name = credentials_settings.agent_namespace,
                   .name = credentials_settings.agent_service_account},
         .policy = config.source_policy ? &*config.source_policy : nullptr,
         .max_in_flight = std::max(1, threads - 1)},
        runtime.logger().WithComponent("operator.credentials"), runtime.metrics());
    if (!credentials) return std::unexpected(credentials.error());
    serving.credentials = std::move(*credentials);
    serving.credentials->AddRoutes(own_listener ? credentials_router : router);
  }
  core::ServerOptions credentials_options = options;
  auto server = core::HttpServer::Create(std::move(options), std::move(router));
  if (!server) return std::unexpected(server.error());
  serving.server = std::move(*server);
  if (credentials_settings.enabled && own_listener) {
    credentials_options.port = *credentials_settings.port;
    credentials_options.threads = credentials_settings.threads;
    credentials_options.body_limit = kMaxCredentialsRequestBytes;
    credentials_options.readiness = nullptr;
    auto credentials_server =
        core::HttpServer::Create(std::move(credentials_options), std::move(credentials_router));
    if (!credentials_server) return std::unexpected(credentials_server.error());
    serving.credentials_server = std::move(*credentials_server);
  }
  serving.revisions->Start();
  serving.syncer = std::thread([&serving, &runtime] {
    if (core::WaitForCacheSync({serving.revisions.get()}, runtime.shutdown(), runtime.clock())) {
      serving.webhook->SetSynced(true);
    }
  });
  runtime.logger().Info(
      "webhook_listening",
      {{"address", settings.address},
       {"port", static_cast<std::int64_t>(serving.server->port())},
       {"path", std::string(kPodWebhookPath)},
       {"revision_path", std::string(kRevisionWebhookPath)},
       {"credentials_path",
        config.credentials.enabled ? std::string(kCredentialsPathPrefix) : std::string("-")},
       {"credentials_port",
        static_cast<std::int64_t>(serving.credentials_server ? serving.credentials_server->port()
                                                             : serving.server->port())}});
  return core::Ok();
}

struct RolloutGateServing {
  std::unique_ptr<RolloutGateService> service;
  std::unique_ptr<core::HttpServer> server;

  ~RolloutGateServing() {
    if (server) server->Stop();
  }
};

core::Status StartRolloutGates(const OperatorConfig& config, core::ComponentRuntime& runtime,
                               const core::KubeConnection& connection,
                               RolloutGateServing& serving) {
  auto service = RolloutGateService::Create(
      *connection.client, runtime.logger().WithComponent("operator.rollout-gates"),
      runtime.metrics());
  if (!service) return std::unexpected(service.error());
  serving.service = std::move(*service);
  core::ServerOptions options;
  options.address = config.rollout_gates.address;
  options.port = config.rollout_gates.port;
  options.threads = 1;
  options.body_limit = 64 * 1024;
  core::Router router;
  serving.service->AddRoutes(router);
  auto server = core::HttpServer::Create(std::move(options), std::move(router));
  if (!server) return std::unexpected(server.error());
  serving.server = std::move(*server);
  runtime.logger().Info("rollout_gates_listening",
                        {{"address", config.rollout_gates.address},
                         {"port", static_cast<std::int64_t>(serving.server->port())},
                         {"path", std::string(kRolloutGatePathPrefix) + "<hook>"}});
  return core::Ok();
}

PeerCertificateSignerOptions PeerSignerOptions(const OperatorConfig& config) {
  const PeerCertificatesConfig& peers = config.peer_certificates;
  return {
      .policy = {.agent_username = fmt::format("system:serviceaccount:{}:{}", peers.agent_namespace,
                                               peers.agent_service_account),
                 .max_lifetime = peers.max_lifetime},
      .ca_certificate_file = peers.ca_certificate_file,
      .ca_key_file = peers.ca_key_file,
      .resync_period = config.controllers.resync_period};
}

}  // namespace

int RunOperator(const OperatorConfig& config, core::ComponentRuntime& runtime) {
  const core::Logger& logger = runtime.logger();
  if (!config.source_policy) {
    logger.Warn("source_policy_missing",
                {{"effect", "every revision that names a source is refused"},
                 {"fix", "set sourcePolicy in the operator's config (docs/security.md)"}});
  }
  auto connection =
      core::ConnectAndLog(config.kubernetes, runtime.clock(), &runtime.shutdown(), logger);
  if (!connection) return 1;
  std::shared_ptr<const PeerTicketIssuer> peer_tickets;
  if (config.peer_certificates.enabled) {
    // A CA that cannot sign stops the operator at start, not at its first leadership.
    auto check = PeerCertificateSigner::Create(*connection->client, *connection->watcher,
                                               PeerSignerOptions(config), logger, runtime.clock());
    if (!check) {
      logger.Error("peer_signer_failed", {{"error", check.error().ToString()}});
      return 2;
    }
    // The same CA signs the tickets that let a staging node read from its peers.
    auto issuer = PeerTicketIssuer::Load(config.peer_certificates.ca_certificate_file,
                                         config.peer_certificates.ca_key_file);
    if (!issuer) {
      logger.Error("peer_ticket_issuer_failed", {{"error", issuer.error().ToString()}});
      return 2;
    }
    peer_tickets = std::move(*issuer);
  }
  WebhookServing webhook;
  if (config.webhook.enabled) {
    if (auto started = StartWebhook(config, runtime, *connection, webhook); !started) {
      logger.Error("webhook_start_failed", {{"error", started.error().ToString()}});
      return 1;
    }
  }
  RolloutGateServing gates;
  if (config.rollout_gates.enabled) {
    if (auto started = StartRolloutGates(config, runtime, *connection, gates); !started) {
      logger.Error("rollout_gates_start_failed", {{"error", started.error().ToString()}});
      return 1;
    }
  }

  auto leader_gauge =
      runtime.metrics().AddGauge({.name = "modelplane_operator_leader",
                                  .help = "1 while this operator replica holds the leader lease."});
  auto leader_child = leader_gauge
                          ? (*leader_gauge)->WithLabels({})
                          : core::Result<core::Gauge>(std::unexpected(leader_gauge.error()));
  if (!leader_child) {
    logger.Error("metrics_registration_failed", {{"error", leader_child.error().ToString()}});
    return 1;
  }
  const core::Gauge is_leader = *leader_child;

  auto metrics = ControllerMetrics::Register(runtime.metrics());
  if (!metrics) {
    logger.Error("metrics_registration_failed", {{"error", metrics.error().ToString()}});
    return 1;
  }
  const std::string candidate_identity = CandidateIdentity();
  const ControllerOptions controller_options{
      .namespace_scope = config.controllers.namespace_name,
      .resync_period = config.controllers.resync_period,
      .revision_workers = config.controllers.revision_workers,
      .cache_workers = config.controllers.cache_workers,
      .reporting_instance = candidate_identity,
      .source_policy = config.source_policy,
      .admission = config.admission,
      .peer_tickets = peer_tickets};

  // The controllers exist only while this replica leads: built on gaining the lease, stopped
  // (workers drained, informers closed) when `stop` fires. /readyz turns true once their
  // informers have synced; a standby replica reports ready too, since it can take over.
  auto lead = [&](core::CancellationToken& stop) {
    is_leader.Set(1);
    logger.Info("leadership_acquired");
    runtime.SetReady(false);
    ControllerManager controllers(*connection->client, *connection->watcher, controller_options,
                                  *metrics, logger, runtime.clock());
    std::unique_ptr<PeerCertificateSigner> peer_signer;
    if (config.peer_certificates.enabled) {
      auto signer =
          PeerCertificateSigner::Create(*connection->client, *connection->watcher,
                                        PeerSignerOptions(config), logger, runtime.clock());
      if (signer) {
        peer_signer = std::move(*signer);
        peer_signer->Start();
      } else {
        logger.Error("peer_signer_failed", {{"error", signer.error().ToString()}});
      }
    }
    if (controllers.Start(stop)) {
      runtime.SetReady(true);
      logger.Info("controllers_started", {{"namespace", controller_options.namespace_scope.empty()
                                                            ? std::string("*")
                                                            : controller_options.namespace_scope}});
      while (stop.SleepFor(runtime.clock(), std::chrono::hours(1))) {
      }
    }
    if (peer_signer) peer_signer->Stop();
    controllers.Stop();
    logger.Info("controllers_stopped");
  };
  auto follow = [&](const std::string& reason) {
    is_leader.Set(0);
    if (reason == "stopped") {
      logger.Info("leadership_released");
    } else {
      logger.Warn("leadership_lost", {{"reason", reason}});
    }
  };

  runtime.SetReady(true);
  if (!config.leader_election.enabled) {
    lead(runtime.shutdown());
    return 0;
  }
  const auto& election = config.leader_election;
  auto election_client = core::LeaderElectionClient(*connection, election.renew_deadline,
                                                    election.retry_period, runtime.clock());
  if (!election_client) {
    logger.Error("leader_election_misconfigured", {{"error", election_client.error().ToString()}});
    return 2;
  }
  auto elector =
      core::LeaderElector::Create(**election_client,
                                  {.lease_namespace = election.namespace_name,
                                   .lease_name = election.lease_name,
                                   .identity = candidate_identity,
                                   .lease_duration = election.lease_duration,
                                   .renew_deadline = election.renew_deadline,
                                   .retry_period = election.retry_period},
                                  {.on_started_leading = lead,
                                   .on_stopped_leading = follow,
                                   .on_new_leader =
                                       [&](const std::string& identity) {
                                         logger.Info("leader_observed", {{"identity", identity}});
                                       }},
                                  runtime.clock());
  if (!elector) {
    logger.Error("leader_election_misconfigured", {{"error", elector.error().ToString()}});
    return 2;
  }
  std::thread stopper([&] {
    runtime.shutdown().SleepFor(runtime.clock(), std::chrono::hours(24 * 365));
    (*elector)->Stop();
  });
  // Losing the lease ends Run; like client-go users we exit and let Kubernetes restart us,
  // so a former leader never keeps stale in-memory state.
  (*elector)->Run();
  runtime.RequestShutdown();
  stopper.join();
  return runtime.shutdown().cancelled() ? 0 : 1;
}

}  // namespace modelplane::controller
