#include "core/backoff/backoff.h"

#include <algorithm>
#include <cmath>

namespace modelplane::core {

std::chrono::nanoseconds ExponentialBackoff::Ceiling(int failures) const {
  const int doublings = std::max(failures, 1) - 1;
  // In floating point, so 2^doublings cannot overflow before the cap applies.
  const double wait = static_cast<double>(initial.count()) * std::pow(2.0, std::min(doublings, 62));
  if (wait >= static_cast<double>(max.count())) return max;
  return std::chrono::nanoseconds(static_cast<std::int64_t>(wait));
}

std::chrono::nanoseconds ExponentialBackoff::Jittered(int failures, std::mt19937_64& random) const {
  const std::int64_t ceiling = Ceiling(failures).count();
  if (ceiling <= 0) return std::chrono::nanoseconds(0);
  std::uniform_int_distribution<std::int64_t> spread(ceiling / 2, ceiling);
  return std::chrono::nanoseconds(spread(random));
}

}  // namespace modelplane::core
