#include "node-agent/peer/upload_throttle.h"

#include <algorithm>
#include <cmath>

namespace modelplane::agent {

UploadThrottle::UploadThrottle(std::uint64_t bytes_per_second, std::uint64_t burst_bytes,
                               const core::Clock& clock)
    : bytes_per_second_(bytes_per_second),
      burst_time_(bytes_per_second == 0 ? std::chrono::nanoseconds(0) : TimeFor(burst_bytes)),
      clock_(clock),
      paid_until_(clock.Now() - burst_time_) {}  // starts full

std::chrono::nanoseconds UploadThrottle::TimeFor(std::uint64_t bytes) const {
  // Whole seconds exactly, the remainder rounded to the nearest nanosecond: no overflow for any
  // byte count, and no drift from binary fractions.
  const std::uint64_t whole = bytes / bytes_per_second_;
  const std::uint64_t rest = bytes % bytes_per_second_;
  const long double fraction =
      static_cast<long double>(rest) * 1e9L / static_cast<long double>(bytes_per_second_);
  return std::chrono::seconds(whole) + std::chrono::nanoseconds(std::llround(fraction));
}

std::chrono::nanoseconds UploadThrottle::Reserve(std::uint64_t bytes) {
  if (unlimited()) return std::chrono::nanoseconds(0);
  const core::Clock::SteadyTime now = clock_.Now();
  std::lock_guard lock(mutex_);
  // An idle bucket refills to `burst` at most: credit older than burst_time_ is forgotten.
  paid_until_ = std::max(paid_until_, now - burst_time_);
  paid_until_ += TimeFor(bytes);
  return std::max(std::chrono::nanoseconds(0),
                  std::chrono::duration_cast<std::chrono::nanoseconds>(paid_until_ - now));
}

}  // namespace modelplane::agent
