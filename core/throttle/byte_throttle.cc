#include "core/throttle/byte_throttle.h"

#include <algorithm>
#include <cmath>

namespace modelplane::core {

ByteThrottle::ByteThrottle(std::uint64_t bytes_per_second, std::uint64_t burst_bytes,
                           const core::Clock& clock)
    : bytes_per_second_(bytes_per_second),
      burst_bytes_(burst_bytes),
      clock_(clock),
      paid_until_(clock.Now() - (bytes_per_second == 0 ? std::chrono::nanoseconds(0)
                                                       : TimeFor(burst_bytes, bytes_per_second))) {
}  // starts full

void ByteThrottle::SetRate(std::uint64_t bytes_per_second) {
  std::lock_guard lock(mutex_);
  bytes_per_second_ = bytes_per_second;
}

std::chrono::nanoseconds ByteThrottle::TimeFor(std::uint64_t bytes, std::uint64_t rate) const {
  // Whole seconds exactly, the remainder rounded to the nearest nanosecond: no overflow for any
  // byte count, and no drift from binary fractions.
  const std::uint64_t whole = bytes / rate;
  const std::uint64_t rest = bytes % rate;
  const long double fraction =
      static_cast<long double>(rest) * 1e9L / static_cast<long double>(rate);
  return std::chrono::seconds(whole) + std::chrono::nanoseconds(std::llround(fraction));
}

std::chrono::nanoseconds ByteThrottle::Reserve(std::uint64_t bytes) {
  const core::Clock::SteadyTime now = clock_.Now();
  std::lock_guard lock(mutex_);
  const std::uint64_t rate = bytes_per_second_.load();
  if (rate == 0) return std::chrono::nanoseconds(0);
  // An idle bucket refills to `burst` at most: credit older than the burst's time is forgotten.
  paid_until_ = std::max(paid_until_, now - TimeFor(burst_bytes_, rate));
  paid_until_ += TimeFor(bytes, rate);
  return std::max(std::chrono::nanoseconds(0),
                  std::chrono::duration_cast<std::chrono::nanoseconds>(paid_until_ - now));
}

}  // namespace modelplane::core
