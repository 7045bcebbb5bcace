#include "core/api/quantity.h"

#include <array>
#include <utility>

namespace modelplane::core {
namespace {

// __extension__: -Wpedantic knows __int128 is not ISO C++; GCC and clang both provide it.
__extension__ typedef __int128 Wide;

constexpr Wide kSaturation = static_cast<Wide>(kMaxMilliQuantity);

struct Suffix {
  std::string_view text;
  int base;  // 2 or 10
  int power;
};

// Longest first, so "Ki" is not read as "K" (which is not a suffix anyway) plus garbage.
constexpr std::array<Suffix, 15> kSuffixes{{{"Ki", 2, 10},
                                            {"Mi", 2, 20},
                                            {"Gi", 2, 30},
                                            {"Ti", 2, 40},
                                            {"Pi", 2, 50},
                                            {"Ei", 2, 60},
                                            {"n", 10, -9},
                                            {"u", 10, -6},
                                            {"m", 10, -3},
                                            {"k", 10, 3},
                                            {"M", 10, 6},
                                            {"G", 10, 9},
                                            {"T", 10, 12},
                                            {"P", 10, 15},
                                            {"E", 10, 18}}};

Wide Saturate(Wide value) {
  return value > kSaturation ? kSaturation : value;
}

Result<std::int64_t> Invalid(std::string_view text) {
  return MakeError(ErrorCode::kInvalidArgument,
                   "\"" + std::string(text.substr(0, 64)) + "\" is not a resource quantity");
}

}  // namespace

Result<std::int64_t> ParseMilliQuantity(std::string_view text) {
  std::string_view rest = text;
  if (!rest.empty() && rest.front() == '+') rest.remove_prefix(1);
  // Digits, at most one '.', then the suffix.
  Wide mantissa = 0;
  int fraction_digits = 0;
  int digits = 0;
  bool dot = false;
  std::size_t position = 0;
  for (; position < rest.size(); ++position) {
    const char c = rest[position];
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    ++digits;
    // Digits past 30 cannot change a saturated result; keep counting fraction digits only.
    if (mantissa < (Wide{1} << 100)) {
      mantissa = mantissa * 10 + (c - '0');
      if (dot) ++fraction_digits;
    } else if (!dot) {
      return kMaxMilliQuantity;
    }
  }
  if (digits == 0) return Invalid(text);
  const std::string_view suffix = rest.substr(position);
  int base = 10;
  int power = 0;
  bool found = suffix.empty();
  for (const Suffix& candidate : kSuffixes) {
    if (!found && candidate.text == suffix) {
      base = candidate.base;
      power = candidate.power;
      found = true;
    }
  }
  // Otherwise a decimal exponent: "1e3", "25E-3" ("E" and "Ei" alone are suffixes, above).
  if (!found && (suffix.front() == 'e' || suffix.front() == 'E')) {
    std::string_view exponent = suffix.substr(1);
    bool negative = false;
    if (!exponent.empty() && (exponent.front() == '+' || exponent.front() == '-')) {
      negative = exponent.front() == '-';
      exponent.remove_prefix(1);
    }
    if (exponent.empty() || exponent.size() > 3) return Invalid(text);
    for (char c : exponent) {
      if (c < '0' || c > '9') return Invalid(text);
      power = power * 10 + (c - '0');
    }
    if (negative) power = -power;
    found = true;
  }
  if (!found) return Invalid(text);

  // value = mantissa * 10^-fraction_digits * base^power, in thousandths, rounded up.
  Wide numerator = mantissa;
  Wide denominator = 1;
  int decimal_exponent = 3 - fraction_digits;  // the 1000 of "thousandths"
  if (base == 10) {
    decimal_exponent += power;
  } else {
    for (int i = 0; i < power; ++i) {
      numerator <<= 1;
      if (numerator > (kSaturation << 1)) return kMaxMilliQuantity;
    }
  }
  for (; decimal_exponent > 0; --decimal_exponent) {
    numerator *= 10;
    if (numerator > (kSaturation << 1)) return kMaxMilliQuantity;
  }
  for (; decimal_exponent < 0; ++decimal_exponent) {
    denominator *= 10;
    if (denominator > (Wide{1} << 100)) return numerator == 0 ? 0 : 1;  // a tiny positive value
  }
  const Wide milli = (numerator + denominator - 1) / denominator;
  return static_cast<std::int64_t>(Saturate(milli));
}

}  // namespace modelplane::core
