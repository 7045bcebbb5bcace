#include "scheduler-extender/extender_app.h"

#include "core/runtime/kube_connection.h"

namespace modelplane::extender {

int RunExtender(const ExtenderConfig& config, core::ComponentRuntime& runtime) {
  const core::Logger& logger = runtime.logger();
  auto connection = core::ConnectToKubernetes(config.kubernetes, runtime.clock());
  if (!connection) {
    logger.Error("kubernetes_connection_failed", {{"error", connection.error().ToString()}});
    return 1;
  }
  logger.Info("api_server_connected",
              {{"server", connection->config.server}, {"version", connection->server_version}});
  runtime.SetReady(true);
  while (runtime.shutdown().SleepFor(std::chrono::hours(1))) {
  }
  return 0;
}

}  // namespace modelplane::extender
