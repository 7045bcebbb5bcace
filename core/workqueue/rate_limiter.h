// Rate limiters that decide how long a failed work item waits before its next attempt.
//
// They follow client-go's controller defaults: per-item exponential backoff (5 ms doubling to
// 1000 s) so one broken object cannot hot-loop, combined with a global token bucket (10 qps,
// burst 100) so many failing objects together cannot overload the API server.
// Thread safety: every limiter is safe to call from many threads.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/backoff/backoff.h"
#include "core/clock/clock.h"

namespace modelplane::core {

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // How long the item should wait before it is retried; counts one more failure for it.
  [[nodiscard]] virtual std::chrono::nanoseconds When(const std::string& key) = 0;
  // Drops the item's failure history (it succeeded or was given up on).
  virtual void Forget(const std::string& key) = 0;
  [[nodiscard]] virtual int NumRequeues(const std::string& key) const = 0;
};

class ItemExponentialRateLimiter final : public RateLimiter {
 public:
  ItemExponentialRateLimiter(std::chrono::nanoseconds base, std::chrono::nanoseconds max);
  [[nodiscard]] std::chrono::nanoseconds When(const std::string& key) override;
  void Forget(const std::string& key) override;
  [[nodiscard]] int NumRequeues(const std::string& key) const override;

 private:
  const std::chrono::nanoseconds base_;
  const std::chrono::nanoseconds max_;
  mutable std::mutex mutex_;
  std::map<std::string, int> failures_;
};

// A token bucket shared by all items: each When() takes one token and returns how long the
// caller must wait for it. Tokens accrue at `per_second` up to `burst`.
class TokenBucketRateLimiter final : public RateLimiter {
 public:
  TokenBucketRateLimiter(double per_second, int burst, const Clock& clock);
  [[nodiscard]] std::chrono::nanoseconds When(const std::string& key) override;
  void Forget(const std::string&) override {}
  [[nodiscard]] int NumRequeues(const std::string&) const override { return 0; }

 private:
  const double per_second_;
  const double burst_;
  const Clock& clock_;
  std::mutex mutex_;
  double tokens_;
  Clock::SteadyTime last_;
};

// The longest wait any of its limiters asks for.
class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters);
  [[nodiscard]] std::chrono::nanoseconds When(const std::string& key) override;
  void Forget(const std::string& key) override;
  [[nodiscard]] int NumRequeues(const std::string& key) const override;

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

// client-go's DefaultControllerRateLimiter: max(exponential 5ms..1000s, bucket 10 qps burst 100).
[[nodiscard]] std::unique_ptr<RateLimiter> MakeDefaultControllerRateLimiter(const Clock& clock);

}  // namespace modelplane::core
