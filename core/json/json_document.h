// Parses untrusted JSON text into a DOM with hard bounds, for every API object modelplane reads.
//
// nlohmann's parser accepts any size, any nesting and silently keeps the last of duplicate keys.
// Here the size is checked before parsing, nesting is checked while parsing (the parse stops at
// the first container past the limit, so a deeply nested document costs nothing), and duplicate
// keys are rejected because two readers could disagree about which one counts. Errors name the
// JSON path where the problem sits.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error/error.h"

namespace modelplane::core {

// One API object: a ModelRevision with thousands of long paths stays well under this, and etcd
// refuses objects over 1.5 MiB anyway. A List response is larger, so callers pass their own.
inline constexpr std::size_t kMaxJsonDocumentBytes = 4 * 1024 * 1024;
inline constexpr int kMaxJsonDepth = 32;

struct JsonLimits {
  std::size_t max_bytes = kMaxJsonDocumentBytes;
  int max_depth = kMaxJsonDepth;
};

[[nodiscard]] Result<nlohmann::json> ParseJsonDocument(std::string_view text,
                                                       const JsonLimits& limits = {});

}  // namespace modelplane::core
