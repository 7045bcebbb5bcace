// The project's one exponential backoff: the HTTP client's retries, informer reconnects, range
// reads in the fetch engine, failed stagings and the work queue's per-item limiter all compute
// their waits here, so the policy is written (and tested) once.
//
// The ceiling starts at `initial` after the first failure and doubles with each further one, up
// to `max`. Jittered waits use "equal jitter": uniform in [ceiling/2, ceiling]. Many clients that
// fail together (an API server restart, an object store answering SlowDown to a whole fleet)
// spread their retries over half the ceiling, and none comes back sooner than half of it.
// Thread safety: a value type; Jittered uses the generator it is given, which the caller owns.
#pragma once

#include <chrono>
#include <random>

namespace modelplane::core {

struct ExponentialBackoff {
  std::chrono::nanoseconds initial{std::chrono::milliseconds(100)};
  std::chrono::nanoseconds max{std::chrono::seconds(30)};

  // initial * 2^(failures - 1), at most max; `failures` below 1 counts as 1. Saturates instead
  // of overflowing on long failure streaks.
  [[nodiscard]] std::chrono::nanoseconds Ceiling(int failures) const;

  // A wait drawn uniformly from [Ceiling(failures) / 2, Ceiling(failures)].
  [[nodiscard]] std::chrono::nanoseconds Jittered(int failures, std::mt19937_64& random) const;
};

}  // namespace modelplane::core
