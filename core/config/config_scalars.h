// Strict parsing of YAML scalar text into the types configuration structs use, and the words
// errors use to describe them ("an integer", "a duration such as 30s, 5m or 250ms").
//
// Strict on purpose: booleans are true/false only (not yes/no/on, whose YAML 1.1 meaning
// surprises people), integers are plain decimal, numbers must be finite. Each function returns
// nullopt for text that is not a valid value; the binder turns that into a located error.
//
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "core/config/byte_size.h"
#include "core/config/duration.h"

namespace modelplane::core {

[[nodiscard]] std::optional<bool> ParseBoolScalar(std::string_view text);
[[nodiscard]] std::optional<std::int64_t> ParseSignedScalar(std::string_view text);
[[nodiscard]] std::optional<std::uint64_t> ParseUnsignedScalar(std::string_view text);
[[nodiscard]] std::optional<double> ParseFiniteDoubleScalar(std::string_view text);

template <typename T>
struct IsChronoDuration : std::false_type {};
template <typename Rep, typename Period>
struct IsChronoDuration<std::chrono::duration<Rep, Period>> : std::true_type {};

// The types a scalar can be bound to.
template <typename T>
concept ConfigScalar = std::same_as<T, std::string> || std::same_as<T, bool> || std::integral<T> ||
    std::floating_point<T> || std::same_as<T, ByteSize> || IsChronoDuration<T>::value;

template <ConfigScalar T>
[[nodiscard]] std::optional<T> ParseScalarAs(std::string_view text) {
  if constexpr (std::same_as<T, std::string>) {
    return std::string(text);
  } else if constexpr (std::same_as<T, bool>) {
    return ParseBoolScalar(text);
  } else if constexpr (std::signed_integral<T>) {
    const auto value = ParseSignedScalar(text);
    if (!value || !std::in_range<T>(*value)) return std::nullopt;
    return static_cast<T>(*value);
  } else if constexpr (std::unsigned_integral<T>) {
    const auto value = ParseUnsignedScalar(text);
    if (!value || !std::in_range<T>(*value)) return std::nullopt;
    return static_cast<T>(*value);
  } else if constexpr (std::floating_point<T>) {
    const auto value = ParseFiniteDoubleScalar(text);
    if (!value) return std::nullopt;
    return static_cast<T>(*value);
  } else if constexpr (std::same_as<T, ByteSize>) {
    const auto bytes = ParseByteSize(text);
    if (!bytes) return std::nullopt;
    return ByteSize{*bytes};
  } else {
    // A duration: exact in the field's own unit, or rejected (250ms is not a whole second).
    const auto parsed = ParseDuration(text);
    if (!parsed) return std::nullopt;
    const auto converted = std::chrono::duration_cast<T>(*parsed);
    if (std::chrono::duration_cast<std::chrono::nanoseconds>(converted) != *parsed) {
      return std::nullopt;
    }
    return converted;
  }
}

template <ConfigScalar T>
[[nodiscard]] std::string DescribeScalarType() {
  if constexpr (std::same_as<T, std::string>) {
    return "a string";
  } else if constexpr (std::same_as<T, bool>) {
    return "a boolean (true or false)";
  } else if constexpr (std::integral<T>) {
    return "an integer";
  } else if constexpr (std::floating_point<T>) {
    return "a number";
  } else if constexpr (std::same_as<T, ByteSize>) {
    return "a byte size such as 256Mi, 8MiB or 1G";
  } else if constexpr (std::same_as<T, std::chrono::nanoseconds>) {
    return "a duration such as 30s, 5m or 250ms";
  } else {
    return fmt::format("a duration such as 30s, 5m or 250ms (a multiple of {})",
                       FormatDuration(std::chrono::duration_cast<std::chrono::nanoseconds>(T(1))));
  }
}

// " in -128..127" for integer types narrower than 64 bits, whose own range is a constraint the
// reader should hear about; empty otherwise.
template <ConfigScalar T>
[[nodiscard]] std::string DescribeNaturalRange() {
  if constexpr (std::integral<T> && !std::same_as<T, bool> && sizeof(T) < sizeof(std::int64_t)) {
    return fmt::format(" in {}..{}", std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  } else {
    return "";
  }
}

}  // namespace modelplane::core
