#include "core/log/log_level.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace modelplane::core {
namespace {

constexpr std::array<LogLevel, 5> kAllLevels = {LogLevel::kTrace, LogLevel::kDebug, LogLevel::kInfo,
                                                LogLevel::kWarn, LogLevel::kError};

Result<LogLevel> ParseFrom(std::string_view text, std::string_view origin) {
  auto parsed = ParseLogLevel(text);
  if (!parsed) return std::unexpected(parsed.error().Wrap(origin));
  return parsed;
}

}  // namespace

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return "trace";
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
  }
  return "unknown";
}

Result<LogLevel> ParseLogLevel(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const LogLevel level : kAllLevels) {
    if (lower == LogLevelName(level)) return level;
  }
  // Quote with fmt's escaping so a value with control characters stays on one line.
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("invalid log level {:?}: expected one of trace, debug, info, "
                               "warn, error",
                               text));
}

Result<LogLevel> ResolveLogLevel(std::string_view flag_value, std::string_view environment_value,
                                 LogLevel fallback) {
  if (!flag_value.empty()) return ParseFrom(flag_value, "--log-level");
  if (!environment_value.empty()) return ParseFrom(environment_value, kLogLevelEnvironmentVariable);
  return fallback;
}

Result<LogLevel> LogLevelFromEnvironment(std::string_view flag_value, LogLevel fallback) {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): documented as a start-up call.
  const char* environment_value = std::getenv(std::string(kLogLevelEnvironmentVariable).c_str());
  return ResolveLogLevel(flag_value, environment_value == nullptr ? "" : environment_value,
                         fallback);
}

}  // namespace modelplane::core
