// One key=value field of a structured log event, typed so each format renders it faithfully
// (a number stays a JSON number, a string is quoted when it must be).
//
// A LogField only views its key and string value: fields are built in the argument list of a
// logging call, e.g. logger.Info("fetch_completed", {{"file", name}, {"bytes", n}}), and live
// until that call returns, which is all the logger needs.
//
// Thread safety: a plain value type.
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace modelplane::core {

using LogValue = std::variant<std::string_view, std::int64_t, std::uint64_t, double, bool>;

struct LogField {
  LogField(std::string_view field_key, std::string_view text) : key(field_key), value(text) {}
  LogField(std::string_view field_key, const char* text)
      : key(field_key), value(std::string_view(text == nullptr ? "" : text)) {}
  LogField(std::string_view field_key, const std::string& text)
      : key(field_key), value(std::string_view(text)) {}
  // Exactly bool, so that pointers and integers never turn into true/false.
  template <typename T>
  requires std::same_as<T, bool> LogField(std::string_view field_key, T flag)
      : key(field_key), value(flag) {}
  template <std::signed_integral T>
  requires(!std::same_as<T, bool>) LogField(std::string_view field_key, T number)
      : key(field_key), value(static_cast<std::int64_t>(number)) {}
  template <std::unsigned_integral T>
  requires(!std::same_as<T, bool>) LogField(std::string_view field_key, T number)
      : key(field_key), value(static_cast<std::uint64_t>(number)) {}
  template <std::floating_point T>
  LogField(std::string_view field_key, T number)
      : key(field_key), value(static_cast<double>(number)) {}
  // Durations are written in seconds; name the key accordingly ("elapsed_seconds").
  template <typename Rep, typename Period>
  LogField(std::string_view field_key, std::chrono::duration<Rep, Period> duration)
      : key(field_key),
        value(std::chrono::duration_cast<std::chrono::duration<double>>(duration).count()) {}

  std::string_view key;
  LogValue value;
};

}  // namespace modelplane::core
