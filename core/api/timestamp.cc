#include "core/api/timestamp.h"

#include <cstdint>
#include <optional>

#include <fmt/format.h>

namespace modelplane::core::api {
namespace {

// Reads exactly `count` decimal digits at `pos`.
std::optional<int> ReadDigits(std::string_view text, std::size_t pos, std::size_t count) {
  if (pos + count > text.size()) return std::nullopt;
  int value = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const char c = text[pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

bool CharAt(std::string_view text, std::size_t pos, char expected) {
  return pos < text.size() && text[pos] == expected;
}

}  // namespace

Result<Timestamp> ParseTimestamp(std::string_view text) {
  const auto fail = [&]() {
    return MakeError(ErrorCode::kInvalidArgument,
                     "must be an RFC 3339 timestamp such as 2024-05-01T12:00:00Z");
  };
  if (text.size() > 64) return fail();
  const auto year = ReadDigits(text, 0, 4);
  const auto month = ReadDigits(text, 5, 2);
  const auto day = ReadDigits(text, 8, 2);
  const auto hour = ReadDigits(text, 11, 2);
  const auto minute = ReadDigits(text, 14, 2);
  const auto second = ReadDigits(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second || !CharAt(text, 4, '-') ||
      !CharAt(text, 7, '-') || !(CharAt(text, 10, 'T') || CharAt(text, 10, 't')) ||
      !CharAt(text, 13, ':') || !CharAt(text, 16, ':')) {
    return fail();
  }
  const std::chrono::year_month_day date{std::chrono::year{*year},
                                         std::chrono::month{static_cast<unsigned>(*month)},
                                         std::chrono::day{static_cast<unsigned>(*day)}};
  if (*year < 1 || !date.ok() || *hour > 23 || *minute > 59 || *second > 59) return fail();

  std::size_t pos = 19;
  std::int64_t micros = 0;
  if (CharAt(text, pos, '.')) {
    ++pos;
    std::size_t digits = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (digits < 6) micros = micros * 10 + (text[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0 || digits > 9) return fail();
    for (std::size_t i = digits; i < 6; ++i) micros *= 10;
  }

  std::int64_t offset_minutes = 0;
  if (CharAt(text, pos, 'Z') || CharAt(text, pos, 'z')) {
    ++pos;
  } else if (CharAt(text, pos, '+') || CharAt(text, pos, '-')) {
    const bool negative = text[pos] == '-';
    const auto offset_hours = ReadDigits(text, pos + 1, 2);
    const auto offset_mins = ReadDigits(text, pos + 4, 2);
    if (!offset_hours || !offset_mins || !CharAt(text, pos + 3, ':') || *offset_hours > 23 ||
        *offset_mins > 59) {
      return fail();
    }
    offset_minutes = *offset_hours * 60 + *offset_mins;
    if (negative) offset_minutes = -offset_minutes;
    pos += 6;
  } else {
    return fail();
  }
  if (pos != text.size()) return fail();

  const std::chrono::sys_days days{date};
  const Timestamp time =
      Timestamp{std::chrono::duration_cast<std::chrono::microseconds>(days.time_since_epoch())} +
      std::chrono::hours{*hour} + std::chrono::minutes{*minute - offset_minutes} +
      std::chrono::seconds{*second} + std::chrono::microseconds{micros};
  // An offset can move a time out of the years FormatTimestamp can write back.
  constexpr std::chrono::sys_days kFirst{std::chrono::year{1} / 1 / 1};
  constexpr std::chrono::sys_days kAfterLast{std::chrono::year{10000} / 1 / 1};
  if (time < kFirst || time >= kAfterLast) return fail();
  return time;
}

std::string FormatTimestamp(Timestamp time) {
  const auto days = std::chrono::floor<std::chrono::days>(time);
  const std::chrono::year_month_day date{days};
  const std::chrono::hh_mm_ss clock{time - days};
  const auto micros = clock.subseconds().count();
  std::string out =
      fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", static_cast<int>(date.year()),
                  static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                  clock.hours().count(), clock.minutes().count(), clock.seconds().count());
  if (micros != 0) out += fmt::format(".{:06}", micros);
  out += 'Z';
  return out;
}

Status ReadTimestamp(const JsonObjectReader& reader, std::string_view key,
                     std::optional<Timestamp>& out) {
  auto found = reader.Find(key, Presence::kOptional);
  if (!found) return std::unexpected(found.error());
  if (!*found) return Ok();
  Timestamp time{};
  MODELPLANE_JSON_TRY(ReadTimestamp(reader, key, time));
  out = time;
  return Ok();
}

Status ReadTimestamp(const JsonObjectReader& reader, std::string_view key, Timestamp& out) {
  // 64 bytes: the longest RFC 3339 form with nanoseconds and an offset is 35.
  std::string text;
  MODELPLANE_JSON_TRY(reader.String(key, text, 64, Presence::kRequired));
  auto parsed = ParseTimestamp(text);
  if (!parsed) return FieldError(reader.PathOf(key), parsed.error().message());
  out = parsed.value();
  return Ok();
}

}  // namespace modelplane::core::api
