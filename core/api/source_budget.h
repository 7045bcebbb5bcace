// SourceBudget (modelplane.io/v1alpha1, cluster-scoped): how much of one source (an object store
// bucket, an HTTP origin, a shared-filesystem root; see source_identity.h) the whole fleet may
// use at once, learned by the operator's admission controller from what the agents measure.
// spec names the source and the ceilings the revisions' capacity hints put on it; status is the
// learned budget, kept there so that a new leader resumes from it instead of starting over,
// and what the last interval measured. `kubectl get sourcebudgets` shows it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/api/object_meta.h"
#include "core/api/timestamp.h"
#include "core/error/error.h"

namespace modelplane::core::api {

inline constexpr std::string_view kSourceBudgetKind = "SourceBudget";

struct SourceBudgetSpec {
  std::string source;  // the source identity
  // The smallest capacity hints any revision naming the source gives: ceilings, not targets.
  std::optional<std::int32_t> max_streams;
  std::optional<std::int64_t> max_bytes_per_second;

  friend bool operator==(const SourceBudgetSpec&, const SourceBudgetSpec&) = default;
};

struct SourceBudgetStatus {
  // The budget: concurrent range requests for the whole fleet, and a byte rate when a ceiling
  // sets one.
  std::int32_t streams = 0;
  std::optional<std::int64_t> bytes_per_second;
  std::string phase;   // Growing, Holding, Cut
  std::string reason;  // why the last step did what it did
  // What the rule has learned (operator/admission/source_budget.h).
  std::int32_t knee_streams = 0;
  std::int64_t best_bytes_per_second = 0;
  std::int32_t best_streams = 0;
  std::int64_t per_stream_bytes_per_second = 0;
  std::int64_t best_ttfb_milliseconds = 0;
  std::int32_t steps_at_knee = 0;
  // The last interval, summed over the fleet.
  std::int64_t observed_bytes_per_second = 0;
  std::int32_t observed_streams = 0;
  std::int64_t throttled_requests = 0;
  std::int64_t failed_requests = 0;
  std::int32_t granted_streams = 0;   // handed out as grants
  std::int32_t waiting_stagings = 0;  // stagings that wanted streams and got none
  std::optional<Timestamp> last_step_time;

  friend bool operator==(const SourceBudgetStatus&, const SourceBudgetStatus&) = default;
};

struct SourceBudgetObject {
  ObjectMeta metadata;
  SourceBudgetSpec spec;
  std::optional<SourceBudgetStatus> status;

  friend bool operator==(const SourceBudgetObject&, const SourceBudgetObject&) = default;
};

// The object's name for a source identity: "<tier>-<16 hex of its sha256>" (identities hold
// slashes and colons, which names cannot).
[[nodiscard]] std::string SourceBudgetName(std::string_view identity);

[[nodiscard]] Result<SourceBudgetObject> SourceBudgetFromJson(const nlohmann::json& value);
[[nodiscard]] nlohmann::json ToJson(const SourceBudgetObject& budget);
[[nodiscard]] nlohmann::json ToJson(const SourceBudgetSpec& spec);
[[nodiscard]] nlohmann::json ToJson(const SourceBudgetStatus& status);

}  // namespace modelplane::core::api
