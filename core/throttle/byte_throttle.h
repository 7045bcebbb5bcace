// A token bucket for bytes, shared by every stream that moves them: the streams a peer server
// sends (serving other nodes must not take more than a share of the node's network and disk)
// and the ranges a node's stagings write (a node that serves inference must keep most of its
// disk for loading).
//
// Reserve(bytes) takes the bytes from the bucket at once, even into debt, and returns how long
// the caller must wait before sending them: reservations queue in arrival order, so concurrent
// streams share the rate fairly and the long-run rate never exceeds the limit. The bucket holds at
// most `burst_bytes`, which bounds how far a stream that was idle can run ahead.
//
// Thread safety: Reserve may be called from any number of threads at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

#include "core/clock/clock.h"

namespace modelplane::core {

class ByteThrottle {
 public:
  // bytes_per_second 0: unlimited (Reserve always returns zero).
  ByteThrottle(std::uint64_t bytes_per_second, std::uint64_t burst_bytes, const core::Clock& clock);

  [[nodiscard]] bool unlimited() const { return bytes_per_second() == 0; }
  [[nodiscard]] std::uint64_t bytes_per_second() const { return bytes_per_second_.load(); }
  // A new rate from now on (0: unlimited); what was reserved at the old rate stays reserved.
  void SetRate(std::uint64_t bytes_per_second);

  // Takes `bytes` from the bucket; returns the wait before they may be sent (zero when the bucket
  // held enough).
  [[nodiscard]] std::chrono::nanoseconds Reserve(std::uint64_t bytes);

 private:
  [[nodiscard]] std::chrono::nanoseconds TimeFor(std::uint64_t bytes, std::uint64_t rate) const;

  std::atomic<std::uint64_t> bytes_per_second_;
  const std::uint64_t burst_bytes_;
  const core::Clock& clock_;
  std::mutex mutex_;
  // The time at which everything reserved so far has been paid for ("theoretical arrival time").
  core::Clock::SteadyTime paid_until_;
};

}  // namespace modelplane::core
