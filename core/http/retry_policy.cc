#include "core/http/retry_policy.h"

#include <algorithm>
#include <charconv>

namespace modelplane::core {

std::chrono::milliseconds Backoff(const RetryPolicy& policy, int failed_attempts,
                                  std::mt19937_64& random) {
  const int doublings = std::clamp(failed_attempts - 1, 0, 30);
  const long long ceiling = policy.max_backoff.count();
  const long long base =
      std::min<long long>(ceiling, policy.initial_backoff.count() * (1LL << doublings));
  const long long half = base / 2;
  std::uniform_int_distribution<long long> jitter(0, std::max<long long>(0, base - half));
  return std::chrono::milliseconds(half + jitter(random));
}

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
