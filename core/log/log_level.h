// Log severity levels, their names, and how the level is chosen from a flag or the environment.
//
// The level comes from --log-level when given, else MODELPLANE_LOG_LEVEL, else info. A value
// that is not one of trace|debug|info|warn|error (any case) is an error the binary reports at
// start-up, naming where the value came from, rather than a silent fallback.
//
// Thread safety: pure functions, except LogLevelFromEnvironment which reads the environment
// (call it at start-up, before threads that might call setenv).
#pragma once

#include <string_view>

#include "core/error/error.h"

namespace modelplane::core {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError };

inline constexpr std::string_view kLogLevelEnvironmentVariable = "MODELPLANE_LOG_LEVEL";

// "trace", "debug", "info", "warn", "error".
[[nodiscard]] std::string_view LogLevelName(LogLevel level);

[[nodiscard]] Result<LogLevel> ParseLogLevel(std::string_view text);

// flag_value wins when non-empty, then environment_value when non-empty, then fallback.
[[nodiscard]] Result<LogLevel> ResolveLogLevel(std::string_view flag_value,
                                               std::string_view environment_value,
                                               LogLevel fallback = LogLevel::kInfo);

// ResolveLogLevel with the value of MODELPLANE_LOG_LEVEL.
[[nodiscard]] Result<LogLevel> LogLevelFromEnvironment(std::string_view flag_value,
                                                       LogLevel fallback = LogLevel::kInfo);

}  // namespace modelplane::core
