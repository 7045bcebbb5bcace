// modelplane-node-agent's configuration file.
#pragma once

#include <string>

#include "core/config/byte_size.h"
#include "core/config/config_map.h"
#include "core/runtime/runtime_config.h"

namespace modelplane::agent {

struct AgentConfig {
  core::AdminConfig admin;
  core::LogConfig log;
  core::KubernetesConfig kubernetes;
  // The node this agent serves; empty: the NODE_NAME environment variable (downward API).
  std::string node_name;
  std::string cache_root = "/var/lib/modelplane/cache";
};

void BindConfig(core::ConfigMap& map, AgentConfig& config);

}  // namespace modelplane::agent
