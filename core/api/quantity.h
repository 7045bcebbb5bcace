// Kubernetes resource quantities ("500m", "2", "1.5Gi", "1e3", "64Ki"), as the API writes them
// in requests, limits and allocatable, read into thousandths of a unit so CPU millicores and
// byte counts share one integer type.
//
// Values round up to the next thousandth (as Kubernetes rounds requests) and saturate at
// kMaxMilliQuantity, which no real request or allocatable reaches (about 9.2 PB of memory).
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include "core/error/error.h"

namespace modelplane::core {

inline constexpr std::int64_t kMaxMilliQuantity = std::numeric_limits<std::int64_t>::max();

// kInvalidArgument for anything that is not a quantity (or is negative).
[[nodiscard]] Result<std::int64_t> ParseMilliQuantity(std::string_view text);

}  // namespace modelplane::core
