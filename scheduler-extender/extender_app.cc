#include "scheduler-extender/extender_app.h"

#include "core/runtime/kube_connection.h"

namespace modelplane::extender {

int RunExtender(const ExtenderConfig& config, core::ComponentRuntime& runtime) {
  const core::Logger& logger = runtime.logger();
  auto connection = core::ConnectAndLog(config.kubernetes, runtime.clock(), logger);
  if (!connection) return 1;
  runtime.SetReady(true);
  while (runtime.shutdown().SleepFor(std::chrono::hours(1))) {
  }
  return 0;
}

}  // namespace modelplane::extender
