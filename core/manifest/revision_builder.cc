#include "core/manifest/revision_builder.h"

#include "core/api/model_revision_validation.h"

namespace modelplane::core {

api::ModelRevisionSpec SpecFromDefaults(const ExecutionDefaults& defaults) {
  api::ModelRevisionSpec spec;
  spec.format = std::string(api::kFormatSafetensors);
  spec.engine.name = defaults.engine;
  spec.engine.version = defaults.engine_version;
  spec.parallelism.tensor_parallel = defaults.tensor_parallel;
  spec.model_name = defaults.model_name;
  return spec;
}

Result<api::ModelRevision> BuildRevision(std::string name, std::string namespace_name,
                                         api::ModelRevisionSpec spec_defaults,
                                         std::vector<api::ModelFile> files,
                                         api::ModelSource source) {
  api::ModelRevision revision;
  revision.metadata.name = std::move(name);
  revision.metadata.namespace_name = std::move(namespace_name);
  revision.spec = std::move(spec_defaults);
  revision.spec.files = std::move(files);
  revision.spec.sources = {std::move(source)};
  if (auto valid = api::ProblemsToStatus(api::ValidateModelRevisionSpec(revision.spec)); !valid) {
    return std::unexpected(valid.error().Wrap("the manifest would be invalid"));
  }
  return revision;
}

}  // namespace modelplane::core
