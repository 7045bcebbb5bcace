// modelplane-operator's main loop: connect to the API server, campaign for leadership, and
// run the controllers while leading.
//
// While leading it runs the ModelRevision and ModelCache controllers
// (operator/controllers/controller_manager.h); losing the lease stops them and ends the process,
// so a former leader never acts on stale state.
#pragma once

#include "core/runtime/component_runtime.h"
#include "operator/operator_config.h"

namespace modelplane::controller {

// Returns the process exit code.
[[nodiscard]] int RunOperator(const OperatorConfig& config, core::ComponentRuntime& runtime);

}  // namespace modelplane::controller
