// The clock every time-dependent component takes as a parameter, so tests control time.
//
// Steady time drives deadlines, backoff and rate limits; wall time is only for timestamps that
// leave the process (status fields, events, logs). Thread safety: all methods may be called
// from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace modelplane::core {

class Clock {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;
  using WallTime = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;
  [[nodiscard]] virtual SteadyTime Now() const = 0;
  [[nodiscard]] virtual WallTime WallNow() const = 0;
};

class SystemClock final : public Clock {
 public:
  [[nodiscard]] SteadyTime Now() const override { return std::chrono::steady_clock::now(); }
  [[nodiscard]] WallTime WallNow() const override { return std::chrono::system_clock::now(); }
};

// A clock that moves only when told to. Both times advance together.
class ManualClock final : public Clock {
 public:
  ManualClock() = default;
  [[nodiscard]] SteadyTime Now() const override {
    return SteadyTime(std::chrono::nanoseconds(nanoseconds_.load()));
  }
  [[nodiscard]] WallTime WallNow() const override {
    return WallTime(std::chrono::duration_cast<WallTime::duration>(
        kWallStart + std::chrono::nanoseconds(nanoseconds_.load())));
  }
  void Advance(std::chrono::nanoseconds by) { nanoseconds_ += by.count(); }

 private:
  static constexpr std::chrono::nanoseconds kWallStart = std::chrono::seconds(1'700'000'000);
  std::atomic<std::int64_t> nanoseconds_{std::chrono::nanoseconds(std::chrono::hours(1)).count()};
};

}  // namespace modelplane::core
