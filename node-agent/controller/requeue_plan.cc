#include "node-agent/controller/requeue_plan.h"

#include <algorithm>

namespace modelplane::agent {

core::ReconcileResult PlanRequeue(const RequeueFacts& facts) {
  if (facts.moving) return core::ReconcileResult::RequeueAfter(facts.status_interval);
  using Duration = core::Clock::SteadyTime::duration;
  std::optional<Duration> wait;
  const auto sooner = [&wait](Duration candidate) {
    wait = wait ? std::min(*wait, candidate) : candidate;
  };
  constexpr Duration kMinimumRetry = std::chrono::seconds(1);
  if (facts.status_differs_since) {
    sooner(facts.status_interval - (facts.now - *facts.status_differs_since));
  }
  if (facts.staging_retry_at) {
    sooner(std::max<Duration>(*facts.staging_retry_at - facts.now, kMinimumRetry));
  }
  if (facts.revision_read_retry_at) {
    sooner(std::max<Duration>(*facts.revision_read_retry_at - facts.now, kMinimumRetry));
  }
  if (facts.retention_interval) sooner(*facts.retention_interval);
  if (wait) return core::ReconcileResult::RequeueAfter(*wait);
  return core::ReconcileResult::Done();
}

}  // namespace modelplane::agent
