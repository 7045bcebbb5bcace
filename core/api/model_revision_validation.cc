#include "core/api/model_revision_validation.h"

#include <array>
#include <set>

#include <fmt/format.h>

#include "core/api/duration.h"
#include "core/api/hub_source.h"
#include "core/api/limits.h"
#include "core/api/source_location_rules.h"
#include "core/json/json_path.h"

namespace modelplane::core::api {
namespace {

constexpr std::array<std::string_view, 7> kKnownRoles = {
    kRoleWeights,      kRoleIndex,   kRoleConfig,     kRoleTokenizer,
    kRoleQuantization, kRoleAdapter, kRoleEngineCache};

// The safetensors header length prefix alone is 8 bytes.
constexpr std::int64_t kMinWeightsFileSize = 8;

// Lower-case DNS-label-like names: engine names, quantization methods, source names.
bool IsSimpleName(std::string_view name, bool allow_dots) {
  if (name.empty() || name.size() > 63) return false;
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name) {
    if (!(alnum(c) || c == '-' || (allow_dots && (c == '.' || c == '_')))) return false;
  }
  return true;
}

class Collector {
 public:
  void Add(ValidationReason reason, std::string path, std::string message) {
    problems_.push_back({reason, std::move(path), std::move(message)});
  }
  std::vector<ValidationProblem> Take() { return std::move(problems_); }

 private:
  std::vector<ValidationProblem> problems_;
};

void ValidateFiles(const ModelRevisionSpec& spec, const std::string& path, Collector& out) {
  const std::string files_path = JsonPathChild(path, "files");
  if (spec.files.empty()) {
    out.Add(ValidationReason::kNoFiles, files_path, "must list at least one file");
    return;
  }
  if (spec.files.size() > kMaxFiles) {
    out.Add(ValidationReason::kTooMany, files_path,
            fmt::format("must list at most {} files", kMaxFiles));
  }
  std::set<std::string_view> seen_paths;
  for (std::size_t i = 0; i < spec.files.size(); ++i) {
    const ModelFile& file = spec.files[i];
    const std::string item = JsonPathIndex(files_path, i);
    if (const std::string problem = CheckRelativePath(file.path); !problem.empty()) {
      out.Add(ValidationReason::kUnsafePath, JsonPathChild(item, "path"), problem);
    } else if (!seen_paths.insert(file.path).second) {
      out.Add(ValidationReason::kDuplicatePath, JsonPathChild(item, "path"),
              fmt::format("duplicate path \"{}\"", file.path));
    }
    if (file.size < 0) {
      out.Add(ValidationReason::kInvalidSize, JsonPathChild(item, "size"), "must not be negative");
    } else if (file.size > kMaxFileSize) {
      out.Add(ValidationReason::kInvalidSize, JsonPathChild(item, "size"),
              fmt::format("must be at most {} bytes", kMaxFileSize));
    } else if (file.role == kRoleWeights && file.size < kMinWeightsFileSize) {
      out.Add(ValidationReason::kInvalidSize, JsonPathChild(item, "size"),
              "a weights file is at least 8 bytes (the safetensors header length)");
    }
    if (!IsCanonicalSha256(file.sha256)) {
      out.Add(ValidationReason::kMalformedDigest, JsonPathChild(item, "sha256"),
              "must be sha256:<64 lower-case hex>");
    }
    bool known_role = false;
    for (std::string_view role : kKnownRoles) known_role = known_role || file.role == role;
    if (!known_role) {
      out.Add(ValidationReason::kUnknownRole, JsonPathChild(item, "role"),
              "must be one of weights, index, config, tokenizer, quantization, adapter, "
              "engine-cache");
    }
  }
}

void ValidateExecution(const ModelRevisionSpec& spec, const std::string& path, Collector& out) {
  if (spec.format != kFormatSafetensors) {
    out.Add(ValidationReason::kUnknownFormat, JsonPathChild(path, "format"), "must be safetensors");
  }
  const std::string parallelism = JsonPathChild(path, "parallelism");
  const auto check_degree = [&](std::int32_t degree, std::string_view key) {
    if (degree < 1 || degree > kMaxParallelDegree) {
      out.Add(ValidationReason::kInvalidValue, JsonPathChild(parallelism, key),
              fmt::format("must be between 1 and {}", kMaxParallelDegree));
    }
  };
  check_degree(spec.parallelism.tensor_parallel, "tensorParallel");
  check_degree(spec.parallelism.pipeline_parallel, "pipelineParallel");

  const std::string quantization = JsonPathChild(path, "quantization");
  if (!IsSimpleName(spec.quantization.method, true)) {
    out.Add(ValidationReason::kInvalidValue, JsonPathChild(quantization, "method"),
            "must be a lower-case name such as none, fp8, awq or gptq");
  }
  if (spec.quantization.parameters.size() > kMaxSmallMapEntries) {
    out.Add(ValidationReason::kTooMany, JsonPathChild(quantization, "parameters"),
            fmt::format("must have at most {} entries", kMaxSmallMapEntries));
  }

  const std::string engine = JsonPathChild(path, "engine");
  if (spec.engine.name.empty()) {
    out.Add(ValidationReason::kMissingField, JsonPathChild(engine, "name"), "is required");
  } else if (!IsSimpleName(spec.engine.name, true)) {
    out.Add(ValidationReason::kInvalidValue, JsonPathChild(engine, "name"),
            "must be a lower-case name such as vllm or sglang");
  }
  if (spec.engine.version.empty()) {
    out.Add(ValidationReason::kMissingField, JsonPathChild(engine, "version"), "is required");
  }
}

void ValidateSource(const ModelSource& source, const std::string& item, Collector& out) {
  if (!IsSimpleName(source.name, false)) {
    out.Add(ValidationReason::kInvalidValue, JsonPathChild(item, "name"),
            "must be a DNS label (lower-case letters, digits and '-', at most 63)");
  }
  const bool object_store = source.type == kSourceObjectStore;
  const bool http = source.type == kSourceHttp;
  const bool shared = source.type == kSourceSharedFilesystem;
  const bool hugging_face = source.type == kSourceHuggingFace;
  const bool model_scope = source.type == kSourceModelScope;
  if (!object_store && !http && !shared && !hugging_face && !model_scope) {
    out.Add(ValidationReason::kUnknownSourceType, JsonPathChild(item, "type"),
            "must be objectStore, http, sharedFilesystem, huggingFace or modelScope");
    return;
  }
  if (object_store != source.object_store.has_value() || http != source.http.has_value() ||
      shared != source.shared_filesystem.has_value() ||
      hugging_face != source.hugging_face.has_value() ||
      model_scope != source.model_scope.has_value()) {
    out.Add(
        ValidationReason::kSourceLocationMismatch, item,
        fmt::format("a source of type {} sets {} and no other location", source.type, source.type));
    return;
  }
  // Every field that ends up in a URL or host name follows a strict grammar
  // (source_location_rules.h).
  const auto check = [&](std::string_view location, std::string_view field,
                         const std::string& problem) {
    if (!problem.empty()) {
      out.Add(ValidationReason::kInvalidValue, JsonPathChild(JsonPathChild(item, location), field),
              problem);
    }
  };
  if (object_store) {
    const ObjectStoreLocation& location = *source.object_store;
    if (location.bucket.empty()) {
      out.Add(ValidationReason::kMissingField,
              JsonPathChild(JsonPathChild(item, "objectStore"), "bucket"), "is required");
    } else {
      check("objectStore", "bucket", CheckBucket(location.bucket));
    }
    if (!location.endpoint.empty()) {
      check("objectStore", "endpoint", CheckEndpointUrl(location.endpoint));
    }
    if (!location.region.empty()) check("objectStore", "region", CheckRegion(location.region));
    check("objectStore", "prefix", CheckObjectPrefix(location.prefix));
  }
  if (http) check("http", "baseURL", CheckBaseUrl(source.http->base_url));
  if (const HubLocation* hub = HubLocationOf(source)) {
    if (!hub->endpoint.empty()) check(source.type, "endpoint", CheckEndpointUrl(hub->endpoint));
    check(source.type, "repository", CheckHubRepository(hub->repository));
    check(source.type, "commit", CheckHubCommit(hub->commit));
  }
  if (shared) {
    const std::string& fs_path = source.shared_filesystem->path;
    const std::string fs_field = JsonPathChild(JsonPathChild(item, "sharedFilesystem"), "path");
    if (!fs_path.starts_with('/')) {
      out.Add(ValidationReason::kInvalidValue, fs_field, "must be an absolute path");
    } else if (const std::string problem = CheckRelativePath(fs_path.substr(1));
               fs_path.size() > 1 && !problem.empty()) {
      out.Add(ValidationReason::kUnsafePath, fs_field, problem);
    }
  }
  if (source.capacity) {
    const std::string capacity = JsonPathChild(item, "capacity");
    if (source.capacity->max_bytes_per_second && *source.capacity->max_bytes_per_second < 1) {
      out.Add(ValidationReason::kInvalidValue, JsonPathChild(capacity, "maxBytesPerSecond"),
              "must be positive");
    }
    if (source.capacity->max_concurrent_fetches &&
        (*source.capacity->max_concurrent_fetches < 1 ||
         *source.capacity->max_concurrent_fetches > 65536)) {
      out.Add(ValidationReason::kInvalidValue, JsonPathChild(capacity, "maxConcurrentFetches"),
              "must be between 1 and 65536");
    }
  }
}

void ValidateSources(const ModelRevisionSpec& spec, const std::string& path, Collector& out) {
  const std::string sources_path = JsonPathChild(path, "sources");
  if (spec.sources.empty()) {
    out.Add(ValidationReason::kNoSources, sources_path, "must list at least one source");
    return;
  }
  if (spec.sources.size() > kMaxSources) {
    out.Add(ValidationReason::kTooMany, sources_path,
            fmt::format("must list at most {} sources", kMaxSources));
  }
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < spec.sources.size(); ++i) {
    const std::string item = JsonPathIndex(sources_path, i);
    ValidateSource(spec.sources[i], item, out);
    if (!names.insert(spec.sources[i].name).second) {
      out.Add(ValidationReason::kDuplicateSourceName, JsonPathChild(item, "name"),
              fmt::format("duplicate source name \"{}\"", spec.sources[i].name));
    }
  }
}

void ValidatePolicies(const ModelRevisionSpec& spec, const std::string& path, Collector& out) {
  if (spec.model_name.size() > 253) {
    out.Add(ValidationReason::kInvalidValue, JsonPathChild(path, "modelName"),
            "must be at most 253 bytes");
  }
  if (spec.prestage) {
    const std::string prestage = JsonPathChild(path, "prestage");
    if (spec.prestage->nodes < 0 || spec.prestage->nodes > kMaxPrestageNodes) {
      out.Add(ValidationReason::kInvalidValue, JsonPathChild(prestage, "nodes"),
              fmt::format("must be between 0 and {}", kMaxPrestageNodes));
    }
    if (spec.prestage->node_selector.size() > kMaxSmallMapEntries) {
      out.Add(ValidationReason::kTooMany, JsonPathChild(prestage, "nodeSelector"),
              fmt::format("must have at most {} entries", kMaxSmallMapEntries));
    }
  }
  if (spec.retention && !spec.retention->rollback_window.empty()) {
    if (auto window = ParseDuration(spec.retention->rollback_window); !window) {
      out.Add(ValidationReason::kInvalidValue,
              JsonPathChild(JsonPathChild(path, "retention"), "rollbackWindow"),
              window.error().message());
    }
  }
}

}  // namespace

std::string_view ValidationReasonName(ValidationReason reason) {
  switch (reason) {
    case ValidationReason::kMissingField: return "MissingField";
    case ValidationReason::kMalformedDigest: return "MalformedDigest";
    case ValidationReason::kDuplicatePath: return "DuplicatePath";
    case ValidationReason::kUnsafePath: return "UnsafePath";
    case ValidationReason::kUnknownRole: return "UnknownRole";
    case ValidationReason::kUnknownFormat: return "UnknownFormat";
    case ValidationReason::kNoFiles: return "NoFiles";
    case ValidationReason::kNoSources: return "NoSources";
    case ValidationReason::kInvalidSize: return "InvalidSize";
    case ValidationReason::kUnknownSourceType: return "UnknownSourceType";
    case ValidationReason::kSourceLocationMismatch: return "SourceLocationMismatch";
    case ValidationReason::kDuplicateSourceName: return "DuplicateSourceName";
    case ValidationReason::kInvalidValue: return "InvalidValue";
    case ValidationReason::kTooMany: return "TooMany";
  }
  return "Unknown";
}

std::string CheckRelativePath(std::string_view path) {
  if (path.empty()) return "must not be empty";
  if (path.size() > kMaxPathLength) return fmt::format("must be at most {} bytes", kMaxPathLength);
  if (path.front() == '/') return "must be relative (no leading '/')";
  for (unsigned char c : path) {
    if (c == '\\') return "must not contain a backslash";
    if (c == 0) return "must not contain a NUL byte";
    if (c < 0x20 || c == 0x7f) return "must not contain control characters";
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t end = path.find('/', start);
    const std::string_view segment =
        path.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (segment.empty()) return "must not contain empty segments ('//' or a trailing '/')";
    if (segment == "." || segment == "..") return "must not contain '.' or '..' segments";
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return "";
}

bool IsCanonicalSha256(std::string_view digest) {
  constexpr std::string_view kPrefix = "sha256:";
  if (digest.size() != kPrefix.size() + 64 || !digest.starts_with(kPrefix)) return false;
  for (char c : digest.substr(kPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

namespace {

// An adapter names its base by a well-formed digest and carries adapter files: without one it
// would stage beside every copy of the base and give the engine nothing to load.
void ValidateBase(const ModelRevisionSpec& spec, const std::string& path, Collector& out) {
  if (!spec.base) return;
  const std::string base_path = JsonPathChild(path, "base");
  if (!IsCanonicalSha256(spec.base->digest)) {
    out.Add(ValidationReason::kMalformedDigest, JsonPathChild(base_path, "digest"),
            "must be the base revision's digest, sha256:<64 lower-case hex>");
  }
  if (!spec.base->name.empty() && !IsSimpleName(spec.base->name, true)) {
    out.Add(ValidationReason::kInvalidValue, JsonPathChild(base_path, "name"),
            "must be a ModelRevision name");
  }
  if (std::ranges::none_of(spec.files,
                           [](const ModelFile& file) { return file.role == kRoleAdapter; })) {
    out.Add(ValidationReason::kInvalidValue, JsonPathChild(path, "files"),
            "an adapter revision (spec.base set) must list at least one file of role adapter");
  }
}

}  // namespace

std::vector<ValidationProblem> ValidateModelRevisionSpec(const ModelRevisionSpec& spec,
                                                         std::string_view path) {
  Collector out;
  const std::string base(path);
  ValidateFiles(spec, base, out);
  ValidateExecution(spec, base, out);
  ValidateSources(spec, base, out);
  ValidatePolicies(spec, base, out);
  ValidateBase(spec, base, out);
  return out.Take();
}

Status ProblemsToStatus(const std::vector<ValidationProblem>& problems) {
  if (problems.empty()) return Ok();
  std::string message;
  for (const ValidationProblem& problem : problems) {
    if (!message.empty()) message += "; ";
    message += fmt::format("{}: {}", JsonPathForDisplay(problem.path), problem.message);
  }
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

}  // namespace modelplane::core::api
