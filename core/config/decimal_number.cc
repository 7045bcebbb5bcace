#include "core/config/decimal_number.h"

namespace modelplane::core {
namespace {

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

constexpr std::uint64_t kMaxFractionScale = 1'000'000'000'000'000'000;  // 10^18

}  // namespace

std::optional<DecimalNumber> ParseDecimalPrefix(std::string_view text) {
  DecimalNumber number;
  std::size_t i = 0;
  bool any_digit = false;
  for (; i < text.size() && IsDigit(text[i]); ++i) {
    const auto digit = static_cast<std::uint64_t>(text[i] - '0');
    if (__builtin_mul_overflow(number.whole, 10u, &number.whole) ||
        __builtin_add_overflow(number.whole, digit, &number.whole)) {
      return std::nullopt;
    }
    any_digit = true;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && IsDigit(text[i]); ++i) {
      if (number.fraction_scale < kMaxFractionScale) {
        number.fraction = number.fraction * 10 + static_cast<std::uint64_t>(text[i] - '0');
        number.fraction_scale *= 10;
      }
      any_digit = true;
    }
  }
  if (!any_digit) return std::nullopt;
  number.length = i;
  return number;
}

std::optional<std::uint64_t> DecimalNumber::Scale(std::uint64_t unit, std::uint64_t limit) const {
  std::uint64_t result = 0;
  if (__builtin_mul_overflow(whole, unit, &result)) return std::nullopt;
  // fraction < 10^18 and unit < 2^64, so the product fits in 128 bits.
  __extension__ using Uint128 = unsigned __int128;
  const auto fraction_part =
      static_cast<std::uint64_t>(static_cast<Uint128>(fraction) * unit / fraction_scale);
  if (__builtin_add_overflow(result, fraction_part, &result) || result > limit) {
    return std::nullopt;
  }
  return result;
}

}  // namespace modelplane::core
