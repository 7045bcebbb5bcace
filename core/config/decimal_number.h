// The "<digits>[.<digits>]" prefix shared by duration and byte-size parsing, scaled by a unit
// with overflow checks, so both parsers read numbers the same way.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace modelplane::core {

struct DecimalNumber {
  std::uint64_t whole = 0;
  std::uint64_t fraction = 0;        // the digits after the point, as an integer
  std::uint64_t fraction_scale = 1;  // 10^(number of fraction digits kept)
  std::size_t length = 0;            // characters consumed

  // whole.fraction * unit, rounded down; nullopt if above `limit`.
  [[nodiscard]] std::optional<std::uint64_t> Scale(std::uint64_t unit, std::uint64_t limit) const;
};

// Reads digits, optionally a point and more digits, from the start of `text`. Fraction digits
// past the 18th are consumed but ignored (they are below any unit's resolution). nullopt when
// there is no digit, or the whole part does not fit in 64 bits.
[[nodiscard]] std::optional<DecimalNumber> ParseDecimalPrefix(std::string_view text);

}  // namespace modelplane::core
