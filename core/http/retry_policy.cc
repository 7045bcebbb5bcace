#include "core/http/retry_policy.h"

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

}  // namespace modelplane::core
