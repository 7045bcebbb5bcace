// modelplane-node-agent: keeps the node's verified model cache and streams weights to GPUs.
#include "core/runtime/component_main.h"
#include "node-agent/agent_app.h"

int main(int argc, char** argv) {
  return modelplane::core::RunComponentMain<modelplane::agent::AgentConfig>(
      argc, argv, "node-agent", "modelplane node agent: verified model cache for one node",
      modelplane::agent::RunAgent);
}
