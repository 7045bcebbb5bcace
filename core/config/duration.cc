#include "core/config/duration.h"

#include <array>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "core/config/decimal_number.h"

namespace modelplane::core {
namespace {

struct DurationUnit {
  std::string_view name;
  std::uint64_t nanoseconds;
};

// Longest names first so "ms" is not read as "m" followed by garbage.
constexpr std::array<DurationUnit, 8> kDurationUnits = {{
    {"ns", 1},
    {"us", 1'000},
    {"\xC2\xB5s", 1'000},  // µs (micro sign)
    {"\xCE\xBCs", 1'000},  // μs (Greek mu)
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
}};

Result<std::chrono::nanoseconds> Invalid(std::string_view text, std::string_view why) {
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("invalid duration {:?}: {}", text, why));
}

}  // namespace

Result<std::chrono::nanoseconds> ParseDuration(std::string_view text) {
  if (text == "0") return std::chrono::nanoseconds(0);
  if (text.empty()) return Invalid(text, "empty; expected e.g. 30s, 5m or 250ms");
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::uint64_t total = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto number = ParseDecimalPrefix(rest);
    if (!number) return Invalid(text, "expected a number followed by a unit (ns, us, ms, s, m, h)");
    rest.remove_prefix(number->length);
    std::size_t unit_length = 0;
    std::uint64_t unit_nanoseconds = 0;
    for (const DurationUnit& unit : kDurationUnits) {
      if (rest.starts_with(unit.name) && unit.name.size() > unit_length) {
        unit_length = unit.name.size();
        unit_nanoseconds = unit.nanoseconds;
      }
    }
    if (unit_length == 0)
      return Invalid(text, "missing or unknown unit; use ns, us, ms, s, m or h");
    rest.remove_prefix(unit_length);
    const auto part = number->Scale(unit_nanoseconds, kMax);
    if (!part || *part > kMax - total) return Invalid(text, "too large");
    total += *part;
  }
  return std::chrono::nanoseconds(static_cast<std::int64_t>(total));
}

std::string FormatDuration(std::chrono::nanoseconds duration) {
  const std::int64_t count = duration.count();
  if (count == 0) return "0s";
  // Largest unit that divides exactly; "us" rather than "µs" keeps it ASCII.
  constexpr std::array<DurationUnit, 6> kFormatUnits = {{{"h", 3'600'000'000'000},
                                                         {"m", 60'000'000'000},
                                                         {"s", 1'000'000'000},
                                                         {"ms", 1'000'000},
                                                         {"us", 1'000},
                                                         {"ns", 1}}};
  for (const DurationUnit& unit : kFormatUnits) {
    const auto size = static_cast<std::int64_t>(unit.nanoseconds);
    if (count % size == 0) return fmt::format("{}{}", count / size, unit.name);
  }
  return fmt::format("{}ns", count);
}

}  // namespace modelplane::core
