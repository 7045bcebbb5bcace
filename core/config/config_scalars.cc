#include "core/config/config_scalars.h"

#include <charconv>
#include <cmath>

namespace modelplane::core {
namespace {

template <typename T>
std::optional<T> FromChars(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [pointer, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || pointer != end) return std::nullopt;
  return value;
}

// from_chars rejects a leading '+', which YAML allows.
std::string_view WithoutPlus(std::string_view text) {
  if (text.size() > 1 && text.front() == '+' && text[1] != '-') text.remove_prefix(1);
  return text;
}

}  // namespace

std::optional<bool> ParseBoolScalar(std::string_view text) {
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return std::nullopt;
}

std::optional<std::int64_t> ParseSignedScalar(std::string_view text) {
  return FromChars<std::int64_t>(WithoutPlus(text));
}

std::optional<std::uint64_t> ParseUnsignedScalar(std::string_view text) {
  return FromChars<std::uint64_t>(WithoutPlus(text));
}

std::optional<double> ParseFiniteDoubleScalar(std::string_view text) {
  const auto value = FromChars<double>(WithoutPlus(text));
  if (!value || !std::isfinite(*value)) return std::nullopt;
  return value;
}

}  // namespace modelplane::core
