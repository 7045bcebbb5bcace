// When and how long the HTTP client waits before trying a request again.
//
// Exponential backoff with "equal jitter" (half fixed, half random) so that many agents failing
// together do not retry in lockstep, capped per wait; a server's Retry-After (seconds form)
// replaces the computed wait unless it asks for longer than max_retry_after, in which case the
// request fails with the server's answer instead of blocking the caller.
// Thread safety: RetryPolicy is a value; Backoff uses the generator it is given.
#pragma once

#include <chrono>
#include <optional>
#include <random>
#include <string_view>

namespace modelplane::core {

struct RetryPolicy {
  int max_attempts = 4;  // including the first; 1 disables retries
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  std::chrono::milliseconds max_retry_after{30'000};
};

// The wait before attempt `failed_attempts + 1` (failed_attempts >= 1).
[[nodiscard]] std::chrono::milliseconds Backoff(const RetryPolicy& policy, int failed_attempts,
                                                std::mt19937_64& random);

// Retry-After in its delta-seconds form; nullopt for dates or garbage (the caller backs off).
[[nodiscard]] std::optional<std::chrono::milliseconds> ParseRetryAfter(std::string_view value);

}  // namespace modelplane::core
