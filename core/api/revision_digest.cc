#include "core/api/revision_digest.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "core/api/model_revision_validation.h"
#include "core/digest/sha256.h"

namespace modelplane::core::api {
namespace {

// Netstring: "<decimal length>:<bytes>,". Self-delimiting, so no value can be confused with a
// field boundary whatever bytes it holds.
void AppendNetstring(std::string& out, std::string_view value) {
  out += fmt::format("{}:", value.size());
  out += value;
  out += ',';
}

void AppendField(std::string& out, std::string_view name, std::string_view value) {
  AppendNetstring(out, name);
  AppendNetstring(out, value);
}

void AppendField(std::string& out, std::string_view name, std::int64_t value) {
  AppendField(out, name, fmt::format("{}", value));
}

}  // namespace

std::string CanonicalRevisionEncoding(const ModelRevisionSpec& spec) {
  std::string out;
  AppendNetstring(out, kRevisionDigestVersion);
  AppendField(out, "format", spec.format);
  AppendField(out, "parallelism.tensorParallel", spec.parallelism.tensor_parallel);
  AppendField(out, "parallelism.pipelineParallel", spec.parallelism.pipeline_parallel);
  AppendField(out, "quantization.method", spec.quantization.method);
  // std::map iterates keys in byte order already.
  AppendField(out, "quantization.parameters",
              static_cast<std::int64_t>(spec.quantization.parameters.size()));
  for (const auto& [key, value] : spec.quantization.parameters) {
    AppendNetstring(out, key);
    AppendNetstring(out, value);
  }
  AppendField(out, "engine.name", spec.engine.name);
  AppendField(out, "engine.version", spec.engine.version);
  AppendField(out, "engine.runtimeCacheKey", spec.engine.runtime_cache_key);

  std::vector<const ModelFile*> files;
  files.reserve(spec.files.size());
  for (const ModelFile& file : spec.files) files.push_back(&file);
  std::sort(files.begin(), files.end(),
            [](const ModelFile* a, const ModelFile* b) { return a->path < b->path; });
  AppendField(out, "files", static_cast<std::int64_t>(files.size()));
  for (const ModelFile* file : files) {
    AppendNetstring(out, file->path);
    AppendNetstring(out, fmt::format("{}", file->size));
    AppendNetstring(out, file->sha256);
    AppendNetstring(out, file->role);
  }
  // Only adapters carry it, so every other revision's digest stays what it was.
  if (spec.base) AppendField(out, "base.digest", spec.base->digest);
  return out;
}

Result<std::string> ComputeRevisionDigest(const ModelRevisionSpec& spec) {
  if (auto status = ProblemsToStatus(ValidateModelRevisionSpec(spec)); !status) {
    return std::unexpected(status.error().Wrap("computing the revision digest"));
  }
  return FormatDigest(Sha256Of(CanonicalRevisionEncoding(spec)));
}

}  // namespace modelplane::core::api
