#include "node-agent/fetch/goodput_meter.h"

#include <cmath>

namespace modelplane::agent {

void GoodputMeter::Sample(core::Clock::SteadyTime now, std::uint64_t done_bytes) {
  samples_.emplace_back(now, done_bytes);
  // Keep one sample at or before the window's start, so the window is always measured whole.
  while (samples_.size() > 2 && samples_[1].first <= now - window_) samples_.pop_front();
}

std::optional<double> GoodputMeter::BytesPerSecond() const {
  if (samples_.size() < 2) return std::nullopt;
  const auto& [first_time, first_bytes] = samples_.front();
  const auto& [last_time, last_bytes] = samples_.back();
  const double seconds = std::chrono::duration<double>(last_time - first_time).count();
  if (seconds <= 0) return std::nullopt;
  return static_cast<double>(last_bytes - first_bytes) / seconds;
}

bool GoodputMeter::WindowCovered() const {
  return samples_.size() >= 2 && samples_.back().first - samples_.front().first >= window_;
}

std::optional<std::chrono::seconds> GoodputMeter::ExpectedFinish(
    std::uint64_t remaining_bytes) const {
  const auto rate = BytesPerSecond();
  if (!rate || *rate <= 0) return std::nullopt;
  return std::chrono::seconds(
      static_cast<std::int64_t>(std::ceil(static_cast<double>(remaining_bytes) / *rate)));
}

}  // namespace modelplane::agent
