#include "operator/operator_app.h"

#include <random>
#include <thread>

#include <fmt/format.h>
#include <unistd.h>

#include "core/kube/leader_elector.h"
#include "core/runtime/kube_connection.h"
#include "operator/controllers/controller_manager.h"

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

}  // namespace

int RunOperator(const OperatorConfig& config, core::ComponentRuntime& runtime) {
  const core::Logger& logger = runtime.logger();
  auto connection = core::ConnectAndLog(config.kubernetes, runtime.clock(), logger);
  if (!connection) return 1;

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
      .reporting_instance = candidate_identity};

  // The controllers exist only while this replica leads: built on gaining the lease, stopped
  // (workers drained, informers closed) when `stop` fires. /readyz turns true once their
  // informers have synced; a standby replica reports ready too, since it can take over.
  auto lead = [&](core::CancellationToken& stop) {
    is_leader.Set(1);
    logger.Info("leadership_acquired");
    runtime.SetReady(false);
    ControllerManager controllers(*connection->client, *connection->watcher, controller_options,
                                  *metrics, logger, runtime.clock());
    if (controllers.Start(stop)) {
      runtime.SetReady(true);
      logger.Info("controllers_started", {{"namespace", controller_options.namespace_scope.empty()
                                                            ? std::string("*")
                                                            : controller_options.namespace_scope}});
      while (stop.SleepFor(std::chrono::hours(1))) {
      }
    }
    controllers.Stop();
    logger.Info("controllers_stopped");
  };
  auto follow = [&] {
    is_leader.Set(0);
    logger.Info("leadership_lost");
  };

  runtime.SetReady(true);
  if (!config.leader_election.enabled) {
    lead(runtime.shutdown());
    return 0;
  }
  const auto& election = config.leader_election;
  auto elector =
      core::LeaderElector::Create(*connection->client,
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
    runtime.shutdown().SleepFor(std::chrono::hours(24 * 365));
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
