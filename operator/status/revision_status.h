// Builds a ModelRevision's status from what the controller observed on this pass: the spec's
// validity, and the ModelCache status entries of the nodes chosen to hold it. Status is rebuilt
// from scratch every pass, never read back as input, except each condition's
// lastTransitionTime, which carries over while its status stays the same (as metav1.Condition
// requires). Pure logic, unit-tested in tests/operator/status.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/condition.h"
#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "core/api/timestamp.h"

namespace modelplane::controller {

namespace api = core::api;

inline constexpr std::string_view kConditionValid = "Valid";
inline constexpr std::string_view kConditionReady = "Ready";
inline constexpr std::string_view kReasonInvalidSpec = "InvalidSpec";
// A source the administrator's source policy does not allow (core/policy/source_policy.h).
inline constexpr std::string_view kReasonSourcePolicyDenied = "SourcePolicyDenied";
// Revoked revisions: True once no node holds any of its bytes.
inline constexpr std::string_view kConditionPurged = "Purged";
// Set while a ModelQuota applies to the revision's namespace: False (QuotaExceeded) when it
// holds fewer prestaged or pinned copies than it asks for (core/api/model_quota.h).
inline constexpr std::string_view kConditionWithinQuota = "WithinQuota";
inline constexpr std::string_view kReasonQuotaExceeded = "QuotaExceeded";

// One node whose ModelCache spec lists the revision.
struct DesiredNodeState {
  std::string node;
  std::optional<api::CachedRevision> cached;  // its status entry for the digest, if any
};

// A node whose ModelCache status still lists the revision's digest, and the bytes it holds.
struct HeldCopy {
  std::string node;
  std::int64_t bytes = 0;
};

struct RevisionObservation {
  std::int64_t generation = 0;
  // Non-empty: the spec is invalid; each line is one problem ("spec.files[0].sha256: ...").
  std::vector<std::string> problems;
  // The Valid condition's reason when there are problems.
  std::string problems_reason = std::string(kReasonInvalidSpec);
  std::string digest;  // empty when invalid
  std::int64_t total_bytes = 0;
  bool revoked = false;                      // spec.revoked, or revoked_by
  std::optional<api::RevokedBy> revoked_by;  // the ModelRevocation that covers it
  std::vector<api::SignedBy> signed_by;      // its verified signatures (core/signing)
  int requested_nodes = 0;                   // spec.prestage.nodes
  int ineligible_nodes = 0;                  // matching nodes left out (not Ready, cordoned, full)
  std::vector<DesiredNodeState> nodes;
  std::vector<api::WorkloadUse> workloads;  // the Deployments and StatefulSets that use it
  // Set while a ModelQuota applies to its namespace: why copies it asks for were not granted
  // (operator/quotas/quota_grant.h), empty when all were.
  std::optional<std::vector<std::string>> quota_refusals;
  // Revoked: every node still holding any of its bytes (the purge's progress).
  std::vector<HeldCopy> held;
};

// Nearest-rank percentile (q in (0, 1]) of values sorted ascending; 0 for none.
[[nodiscard]] double NearestRankPercentile(const std::vector<double>& sorted, double q);

// Sets or replaces the condition of `condition.type`, keeping the previous lastTransitionTime
// when the status did not change.
void SetCondition(std::vector<api::Condition>& conditions, api::Condition condition,
                  const std::vector<api::Condition>& previous);

// Where the nodes' stagings read their bytes, summed by tier; nullopt when no node reports it.
[[nodiscard]] std::optional<api::FetchedBytes> FetchedBytesOf(
    const std::vector<DesiredNodeState>& nodes);

[[nodiscard]] api::ModelRevisionStatus BuildRevisionStatus(
    const RevisionObservation& observation, const std::vector<api::Condition>& previous_conditions,
    api::Timestamp now);

}  // namespace modelplane::controller
