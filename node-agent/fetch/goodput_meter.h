// How fast a staging is really getting somewhere: the bytes that landed (written and counted
// toward the revision, not bytes a source sent and a failed range threw away) over a sliding
// window, and when the staging will finish at that pace. A source that sends the first MiB of
// every range and then stalls moves bytes but lands none; its goodput is zero.
//
// Pure: the caller passes the time with every sample, so tests and a simulation drive it.
// Thread safety: none; one thread (the fetch's supervisor) owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

#include "core/clock/clock.h"

namespace modelplane::agent {

class GoodputMeter {
 public:
  explicit GoodputMeter(std::chrono::milliseconds window) : window_(window) {}

  // `done_bytes`: bytes landed so far (never decreasing, as FetchProgress::done_bytes).
  void Sample(core::Clock::SteadyTime now, std::uint64_t done_bytes);

  // Landed bytes per second over the window (or since the first sample, if shorter); nullopt
  // before two samples a moment apart.
  [[nodiscard]] std::optional<double> BytesPerSecond() const;
  // Whether the samples span a whole window: only then is a low rate a verdict, not a start.
  [[nodiscard]] bool WindowCovered() const;
  // Time to land `remaining_bytes` at the window's rate; nullopt when the rate is zero or not
  // known yet.
  [[nodiscard]] std::optional<std::chrono::seconds> ExpectedFinish(
      std::uint64_t remaining_bytes) const;
  [[nodiscard]] std::chrono::milliseconds window() const { return window_; }

 private:
  const std::chrono::milliseconds window_;
  // Oldest first; the first one at or before now - window is kept as the window's start.
  std::deque<std::pair<core::Clock::SteadyTime, std::uint64_t>> samples_;
};

}  // namespace modelplane::agent
