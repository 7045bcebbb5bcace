// Parsing and formatting of durations written for humans: "30s", "5m", "250ms", "1h30m", "1.5s".
//
// Used by configuration files and command-line flags alike, so both accept exactly the same
// spellings. The grammar is Go's time.ParseDuration without the sign: one or more
// <number><unit> groups, number = digits with an optional fraction, unit one of ns, us (or µs),
// ms, s, m, h; "0" alone means zero. Durations are never negative and must fit in int64
// nanoseconds (about 292 years); anything else is an error that quotes the input.
//
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "core/error/error.h"

namespace modelplane::core {

[[nodiscard]] Result<std::chrono::nanoseconds> ParseDuration(std::string_view text);

// The shortest exact spelling in one unit that ParseDuration reads back: "90m", "250ms", "0s".
[[nodiscard]] std::string FormatDuration(std::chrono::nanoseconds duration);

}  // namespace modelplane::core
