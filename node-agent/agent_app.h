// modelplane-node-agent's main loop for one node. It resolves its node, connects to the API
// server and serves its admin endpoints; the cache, fetch engine, peer server and loader attach
// here with the data-plane issues.
#pragma once

#include "core/runtime/component_runtime.h"
#include "node-agent/agent_config.h"

namespace modelplane::agent {

[[nodiscard]] int RunAgent(const AgentConfig& config, core::ComponentRuntime& runtime);

}  // namespace modelplane::agent
