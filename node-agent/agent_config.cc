#include "node-agent/agent_config.h"

namespace modelplane::agent {

void BindConfig(core::ConfigMap& map, AgentConfig& config) {
  map.Optional("admin", config.admin);
  map.Optional("log", config.log);
  map.Optional("kubernetes", config.kubernetes);
  map.Optional("nodeName", config.node_name);
  map.Optional("cacheRoot", config.cache_root);
  if (!config.cache_root.empty() && config.cache_root.front() != '/') {
    map.Fail("cacheRoot must be an absolute path");
  }
}

}  // namespace modelplane::agent
