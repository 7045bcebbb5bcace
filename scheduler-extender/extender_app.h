// modelplane-scheduler-extender's main loop. It connects to the API server and serves its admin
// endpoints; the filter and prioritize verbs and the cache inventory attach here with the
// end-to-end issue.
#pragma once

#include "core/runtime/component_runtime.h"
#include "scheduler-extender/extender_config.h"

namespace modelplane::extender {

[[nodiscard]] int RunExtender(const ExtenderConfig& config, core::ComponentRuntime& runtime);

}  // namespace modelplane::extender
