// modelplane-operator's main loop: connect to the API server, campaign for leadership, and
// run the controllers while leading.
//
// The ModelRevision and ModelCache controllers attach in RunLeaderWork (issue: end to end);
// until then the operator elects a leader, reports it on /metrics and serves health.
#pragma once

#include "core/runtime/component_runtime.h"
#include "operator/operator_config.h"

namespace modelplane::controller {

// Returns the process exit code.
[[nodiscard]] int RunOperator(const OperatorConfig& config, core::ComponentRuntime& runtime);

}  // namespace modelplane::controller
