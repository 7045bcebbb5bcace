#include "node-agent/agent_app.h"

#include "core/kube/kube_config.h"
#include "core/runtime/kube_connection.h"

namespace modelplane::agent {

int RunAgent(const AgentConfig& config, core::ComponentRuntime& runtime) {
  const core::Logger& logger = runtime.logger();
  std::string node = config.node_name;
  if (node.empty()) node = core::ProcessEnvironment("NODE_NAME").value_or("");
  if (node.empty()) {
    logger.Error("node_name_missing",
                 {{"hint", "set nodeName in the config or NODE_NAME from the downward API"}});
    return 2;
  }
  auto connection = core::ConnectAndLog(config.kubernetes, runtime.clock(), logger);
  if (!connection) return 1;
  auto self = connection->client->Get(core::resources::Nodes(), "", node);
  if (!self) {
    logger.Error("node_lookup_failed", {{"node", node}, {"error", self.error().ToString()}});
    return 1;
  }
  logger.Info("node_found", {{"node", node}, {"cache_root", config.cache_root}});
  runtime.SetReady(true);
  while (runtime.shutdown().SleepFor(std::chrono::hours(1))) {
  }
  return 0;
}

}  // namespace modelplane::agent
