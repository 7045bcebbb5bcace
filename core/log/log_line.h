// Renders one structured log event as one line, in key=value (logfmt) or JSON-lines form.
//
// Every line starts with the same four fields: ts (UTC, RFC 3339 with milliseconds), level,
// component and event (a past-tense snake_case name such as fetch_completed), then the caller's
// fields in order. One event is always exactly one line: in key=value form a value containing a
// space, '=', '"', '\' or any control character is quoted and escaped; in JSON every string is
// escaped per RFC 8259. Bytes that are not UTF-8 become U+FFFD, so JSON lines stay valid.
// Keys are reduced to [A-Za-z0-9_.-] and a caller key that repeats one of the four leading
// fields gets a "_" prefix, so a line never holds the same key twice. String values longer
// than kMaxLogValueBytes are cut, saying how much was dropped: a log line is bounded.
//
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "core/error/error.h"
#include "core/log/log_field.h"
#include "core/log/log_level.h"

namespace modelplane::core {

enum class LogFormat { kKeyValue, kJson };

// "keyvalue" (or "logfmt") and "json", for a --log-format flag; anything else is an error.
[[nodiscard]] Result<LogFormat> ParseLogFormat(std::string_view text);

inline constexpr std::size_t kMaxLogValueBytes = 4096;

struct LogEventHeader {
  std::chrono::system_clock::time_point time;
  LogLevel level = LogLevel::kInfo;
  std::string_view component;
  std::string_view event;
};

// "2026-11-29T17:37:12.123Z".
[[nodiscard]] std::string FormatRfc3339Millis(std::chrono::system_clock::time_point time);

// Appends `fields` as they appear after the header: " k=v k2=v2" or `,"k":v,"k2":v2`.
// Loggers pre-render their context fields with it once.
void AppendLogFields(std::string& out, LogFormat format, std::span<const LogField> fields);

// The whole line without its line feed. `rendered_context` is AppendLogFields output placed
// right after the header.
[[nodiscard]] std::string FormatLogLine(LogFormat format, const LogEventHeader& header,
                                        std::string_view rendered_context,
                                        std::span<const LogField> fields);

}  // namespace modelplane::core
