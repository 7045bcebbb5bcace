// The controller work queue: keys (usually "namespace/name") waiting to be reconciled.
//
// Semantics follow client-go's rate-limited delaying queue, which controllers depend on:
// - a key added many times before a worker takes it is handed out once (adds collapse);
// - a key is never handed to two workers at once: adding it while it is being processed marks
//   it dirty, and Done() queues it again;
// - AddAfter() delays a key; the earliest of several pending delays wins;
// - AddRateLimited() delays by the rate limiter (per-item backoff plus a global bucket);
// - after ShutDown(), adds are ignored, Get() still hands out what is queued and then returns
//   nothing; ShutDownWithDrain() also waits until every handed-out key is Done().
// The queue holds each key at most once in each of its sets, so its size is bounded by the
// number of distinct objects. Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>

#include "core/clock/clock.h"
#include "core/workqueue/rate_limiter.h"

namespace modelplane::core {

class WorkQueue {
 public:
  WorkQueue(std::unique_ptr<RateLimiter> rate_limiter, const Clock& clock);
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;
  ~WorkQueue();  // shuts down and joins the delay thread

  void Add(const std::string& key);
  void AddAfter(const std::string& key, std::chrono::nanoseconds delay);
  void AddRateLimited(const std::string& key);
  // Clears the key's backoff history; call when it reconciled successfully or was given up.
  void Forget(const std::string& key);
  [[nodiscard]] int NumRequeues(const std::string& key) const;

  // Blocks until a key is ready; returns nullopt once shut down and empty.
  [[nodiscard]] std::optional<std::string> Get();
  // Marks a key from Get() finished; re-queues it if it was added meanwhile.
  void Done(const std::string& key);

  void ShutDown();
  void ShutDownWithDrain();
  [[nodiscard]] bool ShuttingDown() const;
  // Keys ready to be handed out (not counting delayed or in-process ones).
  [[nodiscard]] std::size_t Length() const;
  [[nodiscard]] std::size_t DelayedLength() const;

 private:
  void AddLocked(const std::string& key);
  void RunDelayLoop();

  std::unique_ptr<RateLimiter> rate_limiter_;
  const Clock& clock_;

  mutable std::mutex mutex_;
  std::condition_variable ready_changed_;       // Get() waiters
  std::condition_variable processing_changed_;  // ShutDownWithDrain() waiter
  std::condition_variable delayed_changed_;     // the delay thread
  std::deque<std::string> queue_;
  std::unordered_set<std::string> dirty_;
  std::unordered_set<std::string> processing_;
  std::map<std::string, Clock::SteadyTime> delayed_by_key_;
  std::set<std::pair<Clock::SteadyTime, std::string>> delayed_by_time_;
  bool shutting_down_ = false;
  std::thread delay_thread_;
};

}  // namespace modelplane::core
