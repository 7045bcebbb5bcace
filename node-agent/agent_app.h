// modelplane-node-agent's daemon for one node: opens the node's cache store, serves verified
// blobs to peers, stages what the node's ModelCache asks for (and what gated pods on the node
// need), reports status, and lets gated pods go Ready once their weights are verified here.
#pragma once

#include "core/runtime/component_runtime.h"
#include "node-agent/agent_config.h"

namespace modelplane::agent {

[[nodiscard]] int RunAgent(const AgentConfig& config, core::ComponentRuntime& runtime);

}  // namespace modelplane::agent
