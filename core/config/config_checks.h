// Constraints a config field can carry beyond its type: ranges, sets of allowed strings, and
// custom parsers. Each says what it expects, so the error reads as one sentence:
//   field 'http.port': expected an integer in 1..65535, got "70000"
//
// Thread safety: immutable values.
#pragma once

#include <chrono>
#include <concepts>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/config/byte_size.h"
#include "core/config/config_scalars.h"
#include "core/config/duration.h"

namespace modelplane::core {

// The default: any value of the field's type (whose own range the reader still enforces).
struct NoCheck {
  template <typename T>
  [[nodiscard]] bool Accepts(const T& /*value*/) const {
    return true;
  }
  [[nodiscard]] std::string Expected(std::string type_description) const {
    return type_description;
  }
};

template <typename T>
[[nodiscard]] std::string DescribeBound(const T& value) {
  if constexpr (std::same_as<T, ByteSize>) {
    return FormatByteSize(value.bytes);
  } else if constexpr (IsChronoDuration<T>::value) {
    return FormatDuration(std::chrono::duration_cast<std::chrono::nanoseconds>(value));
  } else {
    return fmt::format("{}", value);
  }
}

// Inclusive bounds; build with InRange(1, 65535), InRange(1ms, 1h), InRange(ByteSize{..}, ..).
template <typename T>
struct Range {
  T min;
  T max;

  template <typename V>
  [[nodiscard]] bool Accepts(const V& value) const {
    if constexpr (std::integral<V> && std::integral<T>) {
      return std::cmp_less_equal(min, value) && std::cmp_less_equal(value, max);
    } else {
      return !(value < min) && !(max < value);
    }
  }
  [[nodiscard]] std::string Expected(const std::string& type_description) const {
    return fmt::format("{} in {}..{}", type_description, DescribeBound(min), DescribeBound(max));
  }
};

template <typename A, typename B>
[[nodiscard]] auto InRange(A min, B max) {
  using Common = std::common_type_t<A, B>;
  return Range<Common>{static_cast<Common>(min), static_cast<Common>(max)};
}

// A string from a fixed set, e.g. OneOf({"keyvalue", "json"}).
struct OneOf {
  std::vector<std::string> allowed;

  [[nodiscard]] bool Accepts(const std::string& value) const {
    for (const std::string& candidate : allowed) {
      if (candidate == value) return true;
    }
    return false;
  }
  [[nodiscard]] std::string Expected(const std::string& /*type_description*/) const {
    return fmt::format("one of {}", fmt::join(allowed, ", "));
  }
};

// A field parsed by a function of the caller's, e.g. ParsedBy(&ParseLogLevel): the function's
// error message becomes the field's.
template <typename Parser>
struct ParsedBy {
  Parser parser;
};
template <typename Parser>
ParsedBy(Parser) -> ParsedBy<Parser>;

}  // namespace modelplane::core
