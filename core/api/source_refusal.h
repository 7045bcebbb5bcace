// What a source's error says of the revision's sources in ModelCache status: one fixed reason
// code and a clause that names no host, path or byte. A failed staging and a failed proof of
// possession both report source errors, through this one table.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "core/error/error.h"

namespace modelplane::core::api {

struct SourceRefusal {
  std::string_view reason;  // kCacheReasonSource*
  // Completes "the revision's sources ...": "refused access to its files (...)".
  std::string_view clause;
};

// The refusal a source's error code means; none for codes that do not come from a source
// (verification, space, cancellation, ...), which each caller words itself.
[[nodiscard]] std::optional<SourceRefusal> SourceRefusalOf(ErrorCode code);

}  // namespace modelplane::core::api
