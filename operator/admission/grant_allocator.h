// Shares one source's budget (streams) among the stagings that need bytes from it, as grants.
// Pure.
//
// Strict priority first: pods waiting on a rollout step, then a rollback refill, then prestage,
// then speculative staging; a lower class gets what the higher ones leave. Inside a class the
// share is max-min fair: streams go round-robin, one at a time, to the stagings that still want
// more, in a stable order (revision, then node), so no staging of a class is starved while
// another of the same class holds more than it. A byte rate, when the budget has one, is split
// in proportion to the streams granted.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace modelplane::controller {

enum class StagingPriority {
  kRolloutStep = 0,
  kRollbackRefill = 1,
  kPrestage = 2,
  kSpeculative = 3
};

[[nodiscard]] std::string_view StagingPriorityName(StagingPriority priority);

struct StagingDemand {
  std::string node;
  std::string revision;  // "namespace/name"
  StagingPriority priority = StagingPriority::kPrestage;
  int wanted_streams = 1;  // what its fetch engine would use
};

struct StagingGrant {
  std::string node;
  std::string revision;
  int streams = 0;
  std::optional<std::int64_t> bytes_per_second;
};

// One grant per demand, in the demands' order; a demand that gets nothing has streams 0 (it
// waits for a later round).
[[nodiscard]] std::vector<StagingGrant> AllocateGrants(
    int budget_streams, std::optional<std::int64_t> budget_bytes_per_second,
    const std::vector<StagingDemand>& demands);

}  // namespace modelplane::controller
