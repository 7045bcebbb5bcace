// The clock every time-dependent component takes as a parameter, so tests (and a simulation)
// control time: what time it is, and how a wait for a moment in time ends.
//
// Steady time drives deadlines, backoff and rate limits; wall time is only for timestamps that
// leave the process (status fields, events, logs). Code that waits for a moment waits through
// WaitUntil (or CancellationToken::SleepUntil, which uses it), never through the standard
// library's own clocks, so that the same code runs on a ManualClock's time.
// Thread safety: all methods may be called from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace modelplane::core {

class Clock {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;
  using WallTime = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;
  [[nodiscard]] virtual SteadyTime Now() const = 0;
  [[nodiscard]] virtual WallTime WallNow() const = 0;

  // One wait on `changed` (whose mutex `lock` holds) that ends when it is notified, when this
  // clock reaches `deadline`, or spuriously, as any condition variable wait may: callers loop
  // on their own condition and on Now() < deadline.
  virtual void WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& changed,
                         SteadyTime deadline) const = 0;
};

class SystemClock final : public Clock {
 public:
  [[nodiscard]] SteadyTime Now() const override { return std::chrono::steady_clock::now(); }
  [[nodiscard]] WallTime WallNow() const override { return std::chrono::system_clock::now(); }
  void WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& changed,
                 SteadyTime deadline) const override {
    // A far deadline (time_point::max() for "no deadline") is cut to a day: the conversion to
    // the kernel's timespec must not overflow, and the caller's loop waits again.
    changed.wait_until(lock, std::min(deadline, Now() + std::chrono::hours(24)));
  }
};

// A clock that moves only when told to. Both times advance together.
//
// Waits end within a millisecond of an Advance that passes their deadline: a wait re-reads the
// time every millisecond of real time rather than being woken by Advance, because waking a
// caller's condition variable safely from Advance would need the caller's mutex, whose owner
// may be gone by then.
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
  void WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& changed,
                 SteadyTime deadline) const override {
    if (Now() >= deadline) return;
    ++waiting_;
    changed.wait_for(lock, kRecheck);
    --waiting_;
    ++waits_ended_;
  }
  void Advance(std::chrono::nanoseconds by) { nanoseconds_ += by.count(); }
  // How many threads are in WaitUntil now, and how many of its waits have ended: a test
  // advances time once the code under test waits, and knows that code has looked at the new
  // time once two more waits ended, instead of sleeping and hoping.
  [[nodiscard]] int waiting() const { return waiting_.load(); }
  [[nodiscard]] std::uint64_t waits_ended() const { return waits_ended_.load(); }

 private:
  static constexpr std::chrono::nanoseconds kWallStart = std::chrono::seconds(1'700'000'000);
  static constexpr std::chrono::milliseconds kRecheck{1};
  std::atomic<std::int64_t> nanoseconds_{std::chrono::nanoseconds(std::chrono::hours(1)).count()};
  mutable std::atomic<int> waiting_{0};
  mutable std::atomic<std::uint64_t> waits_ended_{0};
};

}  // namespace modelplane::core
