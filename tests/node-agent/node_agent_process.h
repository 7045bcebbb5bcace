// The node agent binary of this build, run by a cluster test as the DaemonSet would run it:
// `modelplane-node-agent run --config FILE`, its log appended to across restarts (a test waits
// for its own run's lines), and tied to the test's life so a crashed test leaves no agent.
// Thread safety: as ChildProcess::Start.
#pragma once

#include <string>

#include "tests/support/child_process.h"

namespace modelplane::testing {

[[nodiscard]] inline core::Result<ChildProcess> StartNodeAgentProcess(const std::string& config,
                                                                      const std::string& log_path) {
  return ChildProcess::Start(
      {std::string(MODELPLANE_BINARY_DIR) + "/node-agent/modelplane-node-agent", "run", "--config",
       config},
      {.log_path = log_path, .append_log = true, .die_with_parent = true});
}

}  // namespace modelplane::testing
