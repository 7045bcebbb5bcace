#include "scheduler-extender/extender_app.h"

#include "core/http/http_server.h"
#include "core/kube/kube_config.h"
#include "core/runtime/kube_connection.h"
#include "scheduler-extender/extender_service.h"
#include "scheduler-extender/inventory_sync.h"
#include "scheduler-extender/verb_server_options.h"

namespace modelplane::extender {

int RunExtender(const ExtenderConfig& config, core::ComponentRuntime& runtime) {
  const core::Logger& logger = runtime.logger();
  auto options = VerbServerOptions(config.server, core::ProcessEnvironment("POD_IP"), logger);
  if (!options) {
    logger.Error("extender_config_invalid", {{"error", options.error().message()}});
    return 2;
  }
  auto connection =
      core::ConnectAndLog(config.kubernetes, runtime.clock(), &runtime.shutdown(), logger);
  if (!connection) return 1;

  CacheInventory inventory;
  auto service = ExtenderService::Create(inventory, Placement::Default(runtime.clock()), logger,
                                         runtime.metrics(), VerbServiceOptions(config.server));
  if (!service) {
    logger.Error("extender_start_failed", {{"error", service.error().ToString()}});
    return 1;
  }
  // The verbs listen at once (answering 503 until synced), so kube-scheduler's first calls get
  // a clear refusal rather than a connection error.
  // The verbs port's own /readyz tells the same as the admin port's.
  options->readiness = [raw = service->get()] { return raw->synced(); };
  core::Router router;
  (*service)->AddRoutes(router, config.server);
  const std::string address = options->address;
  auto server = core::HttpServer::Create(std::move(*options), std::move(router));
  if (!server) {
    logger.Error("extender_start_failed", {{"error", server.error().ToString()}});
    return 1;
  }
  logger.Info(
      "extender_listening",
      {{"address", address},
       {"port", static_cast<std::int64_t>((*server)->port())},
       {"filter", config.server.FilterPath()},
       {"prioritize", config.server.PrioritizePath()},
       {"tls", config.server.tls.Enabled()},
       {"mutual_tls", config.server.tls.MutualTls()},
       {"body_limit", config.server.body_limit.bytes},
       {"max_nodes", static_cast<std::uint64_t>(config.server.max_nodes)},
       {"max_concurrent_bodies", static_cast<std::uint64_t>(config.server.max_concurrent_bodies)}});

  InventorySync sync(*connection->client, *connection->watcher, runtime.clock(), inventory,
                     logger.WithComponent("scheduler-extender.inventory"));
  sync.Start();
  if (sync.WaitForSync(runtime.shutdown())) {
    (*service)->SetSynced(true);
    runtime.SetReady(true);
    logger.Info("inventory_synced",
                {{"revisions", inventory.RevisionCount()}, {"caches", inventory.CacheCount()}});
    while (runtime.shutdown().SleepFor(runtime.clock(), std::chrono::hours(1))) {
    }
  }
  runtime.SetReady(false);
  (*service)->SetSynced(false);
  (*server)->Stop();
  sync.Stop();
  return 0;
}

}  // namespace modelplane::extender
