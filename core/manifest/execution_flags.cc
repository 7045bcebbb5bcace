#include "core/manifest/execution_flags.h"

#include "core/api/limits.h"

namespace modelplane::core {

void AddExecutionFlags(CLI::App& command, ExecutionDefaults& defaults) {
  command.add_option("--engine,--engine-name", defaults.engine, "spec.engine.name")
      ->capture_default_str();
  command.add_option("--engine-version", defaults.engine_version, "spec.engine.version")
      ->capture_default_str();
  command.add_option("--model-name", defaults.model_name, "spec.modelName");
  command
      .add_option("--tensor-parallel", defaults.tensor_parallel, "spec.parallelism.tensorParallel")
      ->check(CLI::Range(1, static_cast<int>(api::kMaxParallelDegree)));
}

}  // namespace modelplane::core
