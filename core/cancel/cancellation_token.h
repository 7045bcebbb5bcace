// Lets one thread stop another thread's blocking operation (a watch read, a fetch, a sleep).
//
// The blocked side registers what would unblock it (closing a socket, notifying a condition
// variable); Cancel() runs those callbacks once. Sleeps go through SleepFor or SleepUntil, on
// the caller's clock, so that a cancel ends them at once and a ManualClock drives them.
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

#include "core/clock/clock.h"

namespace modelplane::core {

class CancellationToken {
 public:
  using CallbackId = std::uint64_t;

  CancellationToken() = default;
  CancellationToken(const CancellationToken&) = delete;
  CancellationToken& operator=(const CancellationToken&) = delete;

  void Cancel() {
    std::unique_lock lock(mutex_);
    if (cancelled_) return;
    cancelled_ = true;
    changed_.notify_all();
    // Callbacks run one at a time without the lock; Unregister waits for a running one, so an
    // owner never frees what a callback still uses.
    while (!callbacks_.empty()) {
      auto first = callbacks_.begin();
      running_ = first->first;
      std::function<void()> callback = std::move(first->second);
      callbacks_.erase(first);
      lock.unlock();
      callback();
      lock.lock();
      running_ = 0;
      changed_.notify_all();
    }
  }

  [[nodiscard]] bool cancelled() const {
    std::lock_guard lock(mutex_);
    return cancelled_;
  }

  // Runs `callback` on Cancel(), or right away if already cancelled. Returns an id for
  // Unregister; the callback must stay valid until Unregister returns.
  CallbackId Register(std::function<void()> callback) {
    std::unique_lock lock(mutex_);
    if (cancelled_) {
      lock.unlock();
      callback();
      return 0;
    }
    const CallbackId id = ++next_id_;
    callbacks_.emplace(id, std::move(callback));
    return id;
  }

  void Unregister(CallbackId id) {
    std::unique_lock lock(mutex_);
    callbacks_.erase(id);
    changed_.wait(lock, [&] { return running_ != id || id == 0; });
  }

  // Sleeps until `clock` reaches `deadline` or until cancelled; returns false if cancelled.
  bool SleepUntil(const Clock& clock, Clock::SteadyTime deadline) {
    std::unique_lock lock(mutex_);
    while (!cancelled_ && clock.Now() < deadline) clock.WaitUntil(lock, changed_, deadline);
    return !cancelled_;
  }

  // Sleeps for `duration` of `clock`'s time or until cancelled; returns false if cancelled.
  bool SleepFor(const Clock& clock, std::chrono::nanoseconds duration) {
    const Clock::SteadyTime now = clock.Now();
    // Saturates: "an hour" or "forever" from a caller must not wrap around.
    const Clock::SteadyTime deadline =
        duration >= Clock::SteadyTime::max() - now ? Clock::SteadyTime::max() : now + duration;
    return SleepUntil(clock, deadline);
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool cancelled_ = false;
  CallbackId next_id_ = 0;
  CallbackId running_ = 0;
  std::map<CallbackId, std::function<void()>> callbacks_;
};

// Registers a callback for the lifetime of a scope.
class ScopedCancellationCallback {
 public:
  ScopedCancellationCallback(CancellationToken& token, std::function<void()> callback)
      : token_(token), id_(token.Register(std::move(callback))) {}
  ScopedCancellationCallback(const ScopedCancellationCallback&) = delete;
  ScopedCancellationCallback& operator=(const ScopedCancellationCallback&) = delete;
  ~ScopedCancellationCallback() { token_.Unregister(id_); }

 private:
  CancellationToken& token_;
  CancellationToken::CallbackId id_;
};

}  // namespace modelplane::core
