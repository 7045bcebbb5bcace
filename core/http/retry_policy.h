// When and how long the HTTP client waits before trying a request again.
//
// Waits grow as core::ExponentialBackoff computes them (jittered, capped); a server's Retry-After
// (seconds form) replaces the computed wait unless it asks for longer than max_retry_after, in
// which case the request fails with the server's answer instead of blocking the caller.
// Thread safety: RetryPolicy is a value.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace modelplane::core {

struct RetryPolicy {
  int max_attempts = 4;  // including the first; 1 disables retries
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  std::chrono::milliseconds max_retry_after{30'000};
};

// Retry-After (RFC 9110) in its delta-seconds form, the one parser of it for every client (the
// HTTP client and the Kubernetes client); nullopt for dates, garbage and more than a day (the
// caller backs off on its own then). Callers bound the wait further by their own policy.
[[nodiscard]] std::optional<std::chrono::milliseconds> ParseRetryAfter(std::string_view value);

// The wait a RateLimit header asks for (the IETF draft's form, which the Hugging Face Hub sends
// with a 429: `"resolvers";r=0;t=39`): t seconds until the window resets, read as a Retry-After
// of t (a caller adds its own margin, as huggingface_hub waits t + 1). nullopt when no t
// parameter parses or it is over a day.
[[nodiscard]] std::optional<std::chrono::milliseconds> ParseRateLimitReset(std::string_view value);

}  // namespace modelplane::core
