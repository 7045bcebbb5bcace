#include "core/http/byte_range.h"

#include <charconv>

#include <fmt/format.h>

namespace modelplane::core {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Digits only: from_chars would accept a leading '-' for signed types but not here; an empty
// string, a sign or trailing garbage all fail.
std::optional<std::uint64_t> ParseNumber(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

RangeDecision ResolveRange(std::string_view header_value, std::uint64_t size) {
  RangeDecision whole;
  std::string_view value = Trim(header_value);
  constexpr std::string_view kUnit = "bytes=";
  if (!value.starts_with(kUnit)) return whole;
  value = Trim(value.substr(kUnit.size()));
  if (value.find(',') != std::string_view::npos) return whole;
  const std::size_t dash = value.find('-');
  if (dash == std::string_view::npos) return whole;
  const std::string_view first_text = Trim(value.substr(0, dash));
  const std::string_view last_text = Trim(value.substr(dash + 1));

  RangeDecision unsatisfiable{RangeDecision::Kind::kUnsatisfiable, {}};
  if (first_text.empty()) {
    // Suffix form "bytes=-n": the last n bytes.
    const auto suffix = ParseNumber(last_text);
    if (!suffix) return whole;
    if (*suffix == 0 || size == 0) return unsatisfiable;
    const std::uint64_t length = std::min(*suffix, size);
    return {RangeDecision::Kind::kPartial, {size - length, size - 1}};
  }
  const auto first = ParseNumber(first_text);
  if (!first) return whole;
  std::uint64_t last = size == 0 ? 0 : size - 1;
  if (!last_text.empty()) {
    const auto parsed_last = ParseNumber(last_text);
    if (!parsed_last || *parsed_last < *first) return whole;
    last = std::min(*parsed_last, last);
  }
  if (*first >= size) return unsatisfiable;
  return {RangeDecision::Kind::kPartial, {*first, last}};
}

std::string FormatRangeHeader(std::uint64_t first, std::optional<std::uint64_t> last) {
  if (last) return fmt::format("bytes={}-{}", first, *last);
  return fmt::format("bytes={}-", first);
}

std::string FormatContentRange(ByteRange range, std::uint64_t size) {
  return fmt::format("bytes {}-{}/{}", range.first, range.last, size);
}

std::optional<ContentRange> ParseContentRange(std::string_view value) {
  value = Trim(value);
  constexpr std::string_view kUnit = "bytes ";
  if (!value.starts_with(kUnit)) return std::nullopt;
  value = Trim(value.substr(kUnit.size()));
  const std::size_t dash = value.find('-');
  const std::size_t slash = value.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) {
    return std::nullopt;
  }
  const auto first = ParseNumber(value.substr(0, dash));
  const auto last = ParseNumber(value.substr(dash + 1, slash - dash - 1));
  if (!first || !last || *last < *first) return std::nullopt;
  ContentRange result{{*first, *last}, std::nullopt};
  const std::string_view size_text = value.substr(slash + 1);
  if (size_text != "*") {
    result.size = ParseNumber(size_text);
    if (!result.size || *result.size <= *last) return std::nullopt;
  }
  return result;
}

}  // namespace modelplane::core
