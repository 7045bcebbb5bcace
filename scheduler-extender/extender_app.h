// modelplane-scheduler-extender's main loop: connects to the API server, keeps the cache
// inventory in sync with ModelRevisions and ModelCaches, serves kube-scheduler's filter and
// prioritize verbs on its own port, and reports ready (/readyz) once the informers have synced.
#pragma once

#include "core/runtime/component_runtime.h"
#include "scheduler-extender/extender_config.h"

namespace modelplane::extender {

[[nodiscard]] int RunExtender(const ExtenderConfig& config, core::ComponentRuntime& runtime);

}  // namespace modelplane::extender
