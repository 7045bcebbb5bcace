#include "core/http/retry_policy.h"

#include <algorithm>
#include <charconv>

namespace modelplane::core {

std::optional<std::chrono::milliseconds> ParseRetryAfter(std::string_view value) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  unsigned long long seconds = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (value.empty() || error != std::errc() || end != value.data() + value.size() ||
      seconds > 86'400) {
    return std::nullopt;
  }
  return std::chrono::milliseconds(static_cast<long long>(seconds) * 1000);
}

std::optional<std::chrono::milliseconds> ParseRateLimitReset(std::string_view value) {
  std::size_t start = 0;
  while (start < value.size()) {
    const std::size_t end = std::min(value.find_first_of(";,", start), value.size());
    std::string_view parameter = value.substr(start, end - start);
    while (!parameter.empty() && parameter.front() == ' ') parameter.remove_prefix(1);
    if (parameter.starts_with("t=")) {
      return ParseRetryAfter(parameter.substr(2));
    }
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace modelplane::core
