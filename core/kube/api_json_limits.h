// The bounds for JSON the API server sends: responses, watch events and error statuses.
//
// Every response goes through the shared parser (core/json/json_document.h) so that nesting and
// duplicate keys are checked the same way as for every other document modelplane reads. The
// size bound is loose: a List page of 500 large objects is tens of MiB, and the body is already
// in memory when it is parsed, so the bound only refuses absurd sizes. The depth bound leaves
// room for managedFields, which nest one level per field of the object they describe.
// Thread safety: constants.
#pragma once

#include <cstddef>

#include "core/json/json_document.h"

namespace modelplane::core {

inline constexpr JsonLimits kApiResponseJsonLimits{.max_bytes = std::size_t{256} << 20,
                                                   .max_depth = 64};

}  // namespace modelplane::core
