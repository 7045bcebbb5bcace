#include "core/workqueue/work_queue.h"

namespace modelplane::core {
WorkQueue::WorkQueue(std::unique_ptr<RateLimiter> rate_limiter, const Clock& clock)
    : rate_limiter_(std::move(rate_limiter)), clock_(clock) {
  delay_thread_ = std::thread([this] { RunDelayLoop(); });
}

WorkQueue::~WorkQueue() {
  ShutDown();
  if (delay_thread_.joinable()) delay_thread_.join();
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard lock(mutex_);
  AddLocked(key);
}

void WorkQueue::AddLocked(const std::string& key) {
  if (shutting_down_ || dirty_.contains(key)) return;
  dirty_.insert(key);
  // A key being processed goes back on the queue when its worker calls Done().
  if (processing_.contains(key)) return;
  queue_.push_back(key);
  ready_changed_.notify_one();
}

void WorkQueue::AddAfter(const std::string& key, std::chrono::nanoseconds delay) {
  if (delay <= std::chrono::nanoseconds::zero()) {
    Add(key);
    return;
  }
  std::lock_guard lock(mutex_);
  if (shutting_down_) return;
  const auto ready_at = clock_.Now() + delay;
  auto existing = delayed_by_key_.find(key);
  if (existing != delayed_by_key_.end()) {
    if (existing->second <= ready_at) return;  // an earlier wake-up is already pending
    delayed_by_time_.erase({existing->second, key});
    existing->second = ready_at;
  } else {
    delayed_by_key_.emplace(key, ready_at);
  }
  delayed_by_time_.emplace(ready_at, key);
  delayed_changed_.notify_one();
}

void WorkQueue::AddRateLimited(const std::string& key) {
  AddAfter(key, rate_limiter_->When(key));
}

void WorkQueue::Forget(const std::string& key) {
  rate_limiter_->Forget(key);
}

int WorkQueue::NumRequeues(const std::string& key) const {
  return rate_limiter_->NumRequeues(key);
}

std::optional<std::string> WorkQueue::Get() {
  std::unique_lock lock(mutex_);
  ready_changed_.wait(lock, [this] { return !queue_.empty() || shutting_down_; });
  if (queue_.empty()) return std::nullopt;
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  dirty_.erase(key);
  processing_.insert(key);
  return key;
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard lock(mutex_);
  processing_.erase(key);
  if (dirty_.contains(key)) {
    queue_.push_back(key);
    ready_changed_.notify_one();
  }
  processing_changed_.notify_all();
}

void WorkQueue::ShutDown() {
  std::lock_guard lock(mutex_);
  shutting_down_ = true;
  delayed_by_key_.clear();
  delayed_by_time_.clear();
  ready_changed_.notify_all();
  delayed_changed_.notify_all();
}

void WorkQueue::ShutDownWithDrain() {
  ShutDown();
  std::unique_lock lock(mutex_);
  processing_changed_.wait(lock, [this] { return processing_.empty(); });
}

bool WorkQueue::ShuttingDown() const {
  std::lock_guard lock(mutex_);
  return shutting_down_;
}

std::size_t WorkQueue::Length() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

std::size_t WorkQueue::DelayedLength() const {
  std::lock_guard lock(mutex_);
  return delayed_by_key_.size();
}

void WorkQueue::RunDelayLoop() {
  std::unique_lock lock(mutex_);
  while (!shutting_down_) {
    const auto now = clock_.Now();
    while (!delayed_by_time_.empty() && delayed_by_time_.begin()->first <= now) {
      std::string key = delayed_by_time_.begin()->second;
      delayed_by_time_.erase(delayed_by_time_.begin());
      delayed_by_key_.erase(key);
      AddLocked(key);
    }
    // Woken by an earlier AddAfter, by ShutDown, or by the clock reaching the first delay.
    const Clock::SteadyTime next =
        delayed_by_time_.empty() ? Clock::SteadyTime::max() : delayed_by_time_.begin()->first;
    clock_.WaitUntil(lock, delayed_changed_, next);
  }
}

}  // namespace modelplane::core
