// When the agent's loop looks at its node again, decided from the facts of the pass that just
// ended. Pure, so every reason to come back is unit-tested without a cluster.
//
// While anything moves (a staging queued or running, an eviction, a published revision the
// store has not listed yet) the loop comes back at the status pace. Otherwise at the soonest of:
// the status pace after the stored status started to differ from this agent's (to write it
// again), a failed staging's retry, a failed revision read's retry (retries never sooner than a
// second apart), and retention's own interval (the disk fills from outside too, pins lapse,
// uses age). With none of these, the loop waits for an event.
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <optional>

#include "core/clock/clock.h"
#include "core/workqueue/controller_runner.h"

namespace modelplane::agent {

struct RequeueFacts {
  core::Clock::SteadyTime now{};
  std::chrono::milliseconds status_interval{1'000};
  bool moving = false;
  std::optional<core::Clock::SteadyTime> status_differs_since;
  std::optional<core::Clock::SteadyTime> staging_retry_at;
  std::optional<core::Clock::SteadyTime> revision_read_retry_at;
  // Set when retention is enabled.
  std::optional<std::chrono::milliseconds> retention_interval;
};

[[nodiscard]] core::ReconcileResult PlanRequeue(const RequeueFacts& facts);

}  // namespace modelplane::agent
