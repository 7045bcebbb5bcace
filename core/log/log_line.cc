#include "core/log/log_line.h"

#include <array>
#include <cmath>
#include <ctime>
#include <iterator>
#include <type_traits>

#include <fmt/format.h>

#include "core/text/utf8.h"

namespace modelplane::core {
namespace {

constexpr std::size_t kMaxKeyBytes = 128;
constexpr std::array<std::string_view, 4> kHeaderKeys = {"ts", "level", "component", "event"};
constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

bool IsKeyCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

void AppendKey(std::string& out, std::string_view key) {
  if (key.empty()) {
    out += '_';
    return;
  }
  for (const std::string_view reserved : kHeaderKeys) {
    if (key == reserved) out += '_';
  }
  key = key.substr(0, kMaxKeyBytes);
  for (const char c : key) out += IsKeyCharacter(c) ? c : '_';
}

// A value may go bare in key=value form only if a reader splitting on spaces and '=' gets it
// back unchanged.
bool NeedsQuotes(std::string_view text) {
  if (text.empty()) return true;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7F || c == '"' || c == '=' || c == '\\') return true;
  }
  return !IsValidUtf8(text);
}

// Escapes that are valid both inside a JSON string and a quoted logfmt value.
void AppendEscaped(std::string& out, std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x80) {
      const std::size_t length = Utf8SequenceLength(text, i);
      if (length == 0) {
        out += kReplacementCharacter;
        ++i;
      } else {
        out.append(text.substr(i, length));
        i += length;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (byte < 0x20 || byte == 0x7F) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(byte));
        } else {
          out += c;
        }
    }
    ++i;
  }
}

void AppendString(std::string& out, LogFormat format, std::string_view text) {
  std::size_t keep = text.size();
  if (keep > kMaxLogValueBytes) {
    keep = kMaxLogValueBytes;
    // Back off to a character boundary so the cut does not leave half a UTF-8 sequence.
    while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  }
  const std::string_view kept = text.substr(0, keep);
  if (format == LogFormat::kKeyValue && keep == text.size() && !NeedsQuotes(text)) {
    out += text;
    return;
  }
  out += '"';
  AppendEscaped(out, kept);
  if (keep < text.size()) {
    fmt::format_to(std::back_inserter(out), "...[{} bytes truncated]", text.size() - keep);
  }
  out += '"';
}

void AppendDouble(std::string& out, LogFormat format, double number) {
  if (std::isfinite(number)) {
    fmt::format_to(std::back_inserter(out), "{}", number);
    return;
  }
  // JSON has no literal for these, so they travel as strings there.
  const std::string_view text = std::isnan(number) ? "NaN" : (number > 0 ? "+Inf" : "-Inf");
  if (format == LogFormat::kJson) {
    out += '"';
    out += text;
    out += '"';
  } else {
    out += text;
  }
}

void AppendValue(std::string& out, LogFormat format, const LogValue& value) {
  std::visit(
      [&](const auto& typed) {
        using T = std::decay_t<decltype(typed)>;
        if constexpr (std::is_same_v<T, std::string_view>) {
          AppendString(out, format, typed);
        } else if constexpr (std::is_same_v<T, bool>) {
          out += typed ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          AppendDouble(out, format, typed);
        } else {
          fmt::format_to(std::back_inserter(out), "{}", typed);
        }
      },
      value);
}

void AppendField(std::string& out, LogFormat format, std::string_view key, const LogValue& value) {
  if (format == LogFormat::kJson) {
    out += ",\"";
    AppendKey(out, key);
    out += "\":";
  } else {
    out += ' ';
    AppendKey(out, key);
    out += '=';
  }
  AppendValue(out, format, value);
}

// Header fields are written directly: their keys are fixed and must not get the "_" prefix.
void AppendHeaderField(std::string& out, LogFormat format, std::string_view key,
                       std::string_view value, bool first) {
  if (format == LogFormat::kJson) {
    out += first ? "{\"" : ",\"";
    out += key;
    out += "\":";
  } else {
    if (!first) out += ' ';
    out += key;
    out += '=';
  }
  AppendString(out, format, value);
}

}  // namespace

Result<LogFormat> ParseLogFormat(std::string_view text) {
  if (text == "keyvalue" || text == "logfmt") return LogFormat::kKeyValue;
  if (text == "json") return LogFormat::kJson;
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("invalid log format {:?}: expected keyvalue or json", text));
}

std::string FormatRfc3339Millis(std::chrono::system_clock::time_point time) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(time);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(time - seconds);
  const std::time_t as_time_t = std::chrono::system_clock::to_time_t(seconds);
  std::tm utc{};
  gmtime_r(&as_time_t, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                     millis.count());
}

void AppendLogFields(std::string& out, LogFormat format, std::span<const LogField> fields) {
  for (const LogField& field : fields) AppendField(out, format, field.key, field.value);
}

std::string FormatLogLine(LogFormat format, const LogEventHeader& header,
                          std::string_view rendered_context, std::span<const LogField> fields) {
  std::string out;
  out.reserve(128 + rendered_context.size());
  AppendHeaderField(out, format, "ts", FormatRfc3339Millis(header.time), true);
  AppendHeaderField(out, format, "level", LogLevelName(header.level), false);
  AppendHeaderField(out, format, "component", header.component, false);
  AppendHeaderField(out, format, "event", header.event, false);
  out += rendered_context;
  AppendLogFields(out, format, fields);
  if (format == LogFormat::kJson) out += '}';
  return out;
}

}  // namespace modelplane::core
