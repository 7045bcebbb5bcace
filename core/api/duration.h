// The subset of Go duration syntax the API accepts ("24h", "1h30m", "90s"), as whole seconds.
//
// Only h, m and s units with integer amounts: enough for retention windows, and simple enough
// that the CRD pattern '^([0-9]+(h|m|s))+$' and this parser agree exactly.
#pragma once

#include <chrono>
#include <string_view>

#include "core/error/error.h"

namespace modelplane::core::api {

// At most ten years, so sums of durations never overflow.
inline constexpr std::chrono::seconds kMaxDuration{std::chrono::hours{24 * 366 * 10}};

[[nodiscard]] Result<std::chrono::seconds> ParseDuration(std::string_view text);

}  // namespace modelplane::core::api
