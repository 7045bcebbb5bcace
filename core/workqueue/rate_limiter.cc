#include "core/workqueue/rate_limiter.h"

#include <algorithm>

namespace modelplane::core {

ItemExponentialRateLimiter::ItemExponentialRateLimiter(std::chrono::nanoseconds base,
                                                       std::chrono::nanoseconds max)
    : base_(base), max_(max) {}

std::chrono::nanoseconds ItemExponentialRateLimiter::When(const std::string& key) {
  int exponent = 0;
  {
    std::lock_guard lock(mutex_);
    exponent = failures_[key]++;
  }
  // Without jitter, as client-go's: the global token bucket is what spreads many items apart.
  return ExponentialBackoff{.initial = base_, .max = max_}.Ceiling(exponent + 1);
}

void ItemExponentialRateLimiter::Forget(const std::string& key) {
  std::lock_guard lock(mutex_);
  failures_.erase(key);
}

int ItemExponentialRateLimiter::NumRequeues(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto found = failures_.find(key);
  return found == failures_.end() ? 0 : found->second;
}

TokenBucketRateLimiter::TokenBucketRateLimiter(double per_second, int burst, const Clock& clock)
    : per_second_(per_second),
      burst_(static_cast<double>(burst)),
      clock_(clock),
      tokens_(static_cast<double>(burst)),
      last_(clock.Now()) {}

std::chrono::nanoseconds TokenBucketRateLimiter::When(const std::string&) {
  std::lock_guard lock(mutex_);
  const auto now = clock_.Now();
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  last_ = now;
  tokens_ = std::min(burst_, tokens_ + elapsed * per_second_);
  // Taking a token may drive the balance negative: the debt is the caller's wait, and it also
  // delays whoever comes next, which is what keeps the aggregate rate at per_second_.
  tokens_ -= 1.0;
  if (tokens_ >= 0.0) return std::chrono::nanoseconds(0);
  return std::chrono::nanoseconds(static_cast<std::int64_t>(-tokens_ / per_second_ * 1e9));
}

MaxOfRateLimiter::MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
    : limiters_(std::move(limiters)) {}

std::chrono::nanoseconds MaxOfRateLimiter::When(const std::string& key) {
  std::chrono::nanoseconds longest{0};
  for (auto& limiter : limiters_) longest = std::max(longest, limiter->When(key));
  return longest;
}

void MaxOfRateLimiter::Forget(const std::string& key) {
  for (auto& limiter : limiters_) limiter->Forget(key);
}

int MaxOfRateLimiter::NumRequeues(const std::string& key) const {
  int most = 0;
  for (const auto& limiter : limiters_) most = std::max(most, limiter->NumRequeues(key));
  return most;
}

std::unique_ptr<RateLimiter> MakeDefaultControllerRateLimiter(const Clock& clock) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialRateLimiter>(std::chrono::milliseconds(5),
                                                                  std::chrono::seconds(1000)));
  limiters.push_back(std::make_unique<TokenBucketRateLimiter>(10.0, 100, clock));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

}  // namespace modelplane::core
