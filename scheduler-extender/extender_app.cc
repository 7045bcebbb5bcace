#include "scheduler-extender/extender_app.h"

#include "core/http/http_server.h"
#include "core/runtime/kube_connection.h"
#include "scheduler-extender/extender_service.h"
#include "scheduler-extender/inventory_sync.h"

namespace modelplane::extender {

int RunExtender(const ExtenderConfig& config, core::ComponentRuntime& runtime) {
  const core::Logger& logger = runtime.logger();
  if (auto valid = ValidateServerConfig(config.server); !valid) {
    logger.Error("extender_config_invalid", {{"error", valid.error().message()}});
    return 2;
  }
  auto connection = core::ConnectAndLog(config.kubernetes, runtime.clock(), logger);
  if (!connection) return 1;

  CacheInventory inventory;
  auto service = ExtenderService::Create(inventory, Placement::Default(), logger, runtime.metrics(),
                                         {.body_limit = config.server.body_limit.bytes});
  if (!service) {
    logger.Error("extender_start_failed", {{"error", service.error().ToString()}});
    return 1;
  }
  // The verbs listen at once (answering 503 until synced), so kube-scheduler's first calls get
  // a clear refusal rather than a connection error.
  core::ServerOptions options;
  options.address = config.server.address;
  options.port = config.server.port;
  options.threads = config.server.threads;
  options.body_limit = config.server.body_limit.bytes;
  options.body_timeout = config.server.body_timeout;
  // The verbs port's own /readyz tells the same as the admin port's.
  options.readiness = [raw = service->get()] { return raw->synced(); };
  core::Router router;
  (*service)->AddRoutes(router, config.server);
  auto server = core::HttpServer::Create(std::move(options), std::move(router));
  if (!server) {
    logger.Error("extender_start_failed", {{"error", server.error().ToString()}});
    return 1;
  }
  logger.Info("extender_listening", {{"address", config.server.address},
                                     {"port", static_cast<std::int64_t>((*server)->port())},
                                     {"filter", config.server.FilterPath()},
                                     {"prioritize", config.server.PrioritizePath()}});

  InventorySync sync(*connection->client, *connection->watcher, runtime.clock(), inventory,
                     logger.WithComponent("scheduler-extender.inventory"));
  sync.Start();
  if (sync.WaitForSync(runtime.shutdown())) {
    (*service)->SetSynced(true);
    runtime.SetReady(true);
    logger.Info("inventory_synced",
                {{"revisions", inventory.RevisionCount()}, {"caches", inventory.CacheCount()}});
    while (runtime.shutdown().SleepFor(std::chrono::hours(1))) {
    }
  }
  runtime.SetReady(false);
  (*service)->SetSynced(false);
  (*server)->Stop();
  sync.Stop();
  return 0;
}

}  // namespace modelplane::extender
