// A ModelRevision from a file list and one source, with the execution fields every tool that
// writes revisions (the node agent's `manifest`, `kubectl modelplane import`) fills the same way,
// validated before anyone applies it.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/api/model_revision.h"
#include "core/error/error.h"

namespace modelplane::core {

// The execution fields a file listing cannot tell: which engine runs the weights, how they are
// split. Defaults are the ones a single-GPU vLLM deployment takes.
struct ExecutionDefaults {
  std::string engine = "vllm";
  std::string engine_version = "unspecified";
  std::string model_name;  // spec.modelName, for humans; empty: omitted
  std::int32_t tensor_parallel = 1;
};

// A spec with format safetensors and `defaults`' engine, model name and parallelism; files and
// sources empty.
[[nodiscard]] api::ModelRevisionSpec SpecFromDefaults(const ExecutionDefaults& defaults);

// A ModelRevision with `files` and `source`, the other execution fields from `spec_defaults`
// (format, engine, parallelism...), its spec validated with ValidateModelRevisionSpec. An empty
// `namespace_name` leaves metadata.namespace out, so `kubectl apply` uses the context's.
[[nodiscard]] Result<api::ModelRevision> BuildRevision(std::string name, std::string namespace_name,
                                                       api::ModelRevisionSpec spec_defaults,
                                                       std::vector<api::ModelFile> files,
                                                       api::ModelSource source);

}  // namespace modelplane::core
