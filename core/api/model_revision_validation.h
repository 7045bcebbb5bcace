// Semantic validation of a ModelRevision spec, used by the operator before computing a digest.
//
// The CRD schema catches most of this at admission, but the operator must not trust that (the
// CRD may be older, or absent in tests), and a safe path or a well-formed digest is what keeps a
// node agent from writing outside its cache or accepting the wrong bytes. Every problem is
// reported, each with a stable reason code for conditions and metrics, and the JSON path.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/api/model_revision.h"
#include "core/error/error.h"

namespace modelplane::core::api {

enum class ValidationReason {
  kMissingField,
  kMalformedDigest,
  kDuplicatePath,
  kUnsafePath,
  kUnknownRole,
  kUnknownFormat,
  kNoFiles,
  kNoSources,
  kInvalidSize,
  kUnknownSourceType,
  kSourceLocationMismatch,
  kDuplicateSourceName,
  kInvalidValue,
  kTooMany,
};

// CamelCase name, usable as a Condition reason ("MalformedDigest").
[[nodiscard]] std::string_view ValidationReasonName(ValidationReason reason);

struct ValidationProblem {
  ValidationReason reason;
  std::string path;     // e.g. "spec.files[3].sha256"
  std::string message;  // e.g. "must be sha256:<64 lower-case hex>"

  friend bool operator==(const ValidationProblem&, const ValidationProblem&) = default;
};

// Empty when the spec is valid. `path` prefixes every problem's path.
[[nodiscard]] std::vector<ValidationProblem> ValidateModelRevisionSpec(
    const ModelRevisionSpec& spec, std::string_view path = "spec");

// Ok when there are no problems; otherwise one kInvalidArgument Error listing them all
// ("spec.files[3].sha256: must be ...; spec.sources: ...").
[[nodiscard]] Status ProblemsToStatus(const std::vector<ValidationProblem>& problems);

// The path rules on their own, for node agents that map file paths into their cache: relative,
// '/'-separated, no empty, "." or ".." segments, no backslash, NUL or control characters.
// Returns an empty string when the path is safe, otherwise what is wrong.
[[nodiscard]] std::string CheckRelativePath(std::string_view path);

// "sha256:" followed by exactly 64 lower-case hex digits (the CRD pattern).
[[nodiscard]] bool IsCanonicalSha256(std::string_view digest);

}  // namespace modelplane::core::api
