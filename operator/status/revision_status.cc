#include "operator/status/revision_status.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/api/source_identity.h"

namespace modelplane::controller {
namespace {

// Condition messages stay readable in `kubectl describe`; the CRD allows 32 KiB.
constexpr std::size_t kMaxMessageBytes = 4096;

std::string Truncate(std::string message) {
  if (message.size() > kMaxMessageBytes) {
    message.resize(kMaxMessageBytes - 3);
    message += "...";
  }
  return message;
}

api::Condition MakeCondition(std::string_view type, bool status, std::string reason,
                             std::string message, std::int64_t generation, api::Timestamp now) {
  return {.type = std::string(type),
          .status = std::string(status ? api::kConditionTrue : api::kConditionFalse),
          .observed_generation = generation,
          .last_transition_time = now,
          .reason = std::move(reason),
          .message = Truncate(std::move(message))};
}

}  // namespace

double NearestRankPercentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

void SetCondition(std::vector<api::Condition>& conditions, api::Condition condition,
                  const std::vector<api::Condition>& previous) {
  const auto old = std::find_if(previous.begin(), previous.end(),
                                [&](const api::Condition& c) { return c.type == condition.type; });
  if (old != previous.end() && old->status == condition.status) {
    condition.last_transition_time = old->last_transition_time;
  }
  const auto existing =
      std::find_if(conditions.begin(), conditions.end(),
                   [&](const api::Condition& c) { return c.type == condition.type; });
  if (existing != conditions.end()) {
    *existing = std::move(condition);
  } else {
    conditions.push_back(std::move(condition));
  }
}

std::optional<api::FetchedBytes> FetchedBytesOf(const std::vector<DesiredNodeState>& nodes) {
  api::FetchedBytes fetched;
  std::int64_t ready = 0;
  for (const DesiredNodeState& node : nodes) {
    if (!node.cached) continue;
    for (const auto& [tier, bytes] : node.cached->bytes_by_tier) {
      fetched.by_tier[tier] += bytes;
      if (api::IsSourceTier(tier)) fetched.origin_bytes += bytes;
    }
    if (node.cached->state == api::kCacheStateReady) ++ready;
  }
  if (fetched.by_tier.empty()) return std::nullopt;
  fetched.origin_bytes_per_replica = ready > 0 ? fetched.origin_bytes / ready : 0;
  return fetched;
}

api::ModelRevisionStatus BuildRevisionStatus(const RevisionObservation& observation,
                                             const std::vector<api::Condition>& previous_conditions,
                                             api::Timestamp now) {
  // Conditions carry seconds, as metav1.Time does, so a status read back compares equal.
  now = std::chrono::floor<std::chrono::seconds>(now);
  const std::int64_t generation = observation.generation;
  api::ModelRevisionStatus status;
  status.observed_generation = generation;
  status.total_bytes = observation.total_bytes;
  auto set = [&](std::string_view type, bool value, std::string reason, std::string message) {
    SetCondition(status.conditions,
                 MakeCondition(type, value, std::move(reason), std::move(message), generation, now),
                 previous_conditions);
  };

  if (!observation.problems.empty()) {
    status.phase = std::string(api::kPhaseInvalid);
    std::string message = fmt::format("{}", fmt::join(observation.problems, "; "));
    set(kConditionValid, false, observation.problems_reason, message);
    set(kConditionReady, false, observation.problems_reason,
        "the spec is invalid; no node is asked to hold it");
    return status;
  }
  status.digest = observation.digest;
  status.workloads = observation.workloads;
  status.signed_by = observation.signed_by;
  std::vector<std::string> signers;
  signers.reserve(observation.signed_by.size());
  for (const api::SignedBy& signature : observation.signed_by) signers.push_back(signature.signer);
  set(kConditionValid, true, "Validated",
      signers.empty() ? std::string("the spec passed validation; status.digest is its key")
                      : fmt::format("the spec passed validation and is signed by {}; "
                                    "status.digest is its key",
                                    fmt::join(signers, ", ")));

  std::vector<double> ready_seconds;
  std::vector<std::string> failures;
  for (const DesiredNodeState& node : observation.nodes) {
    api::NodeServing serving{.node = node.node};
    if (node.cached) {
      const std::string& state = node.cached->state;
      serving.tier = node.cached->source_tier;
      if (state == api::kCacheStateReady) {
        ++status.ready_nodes;
        serving.bytes_to_ready_seconds = BytesToReadySeconds(*node.cached);
        if (serving.bytes_to_ready_seconds)
          ready_seconds.push_back(*serving.bytes_to_ready_seconds);
      } else if (state == api::kCacheStateStaging || state == api::kCacheStatePending) {
        ++status.staging_nodes;
      } else if (state == api::kCacheStateFailed) {
        ++status.failed_nodes;
        failures.push_back(node.cached->message.empty()
                               ? node.node
                               : fmt::format("{}: {}", node.node, node.cached->message));
      }
    }
    status.nodes.push_back(std::move(serving));
  }
  std::sort(status.nodes.begin(), status.nodes.end(),
            [](const auto& a, const auto& b) { return a.node < b.node; });
  status.fetched = FetchedBytesOf(observation.nodes);
  status.desired_nodes = static_cast<std::int32_t>(observation.nodes.size());
  if (!ready_seconds.empty()) {
    std::sort(ready_seconds.begin(), ready_seconds.end());
    status.bytes_to_ready_seconds =
        api::LatencyPercentiles{.p50 = NearestRankPercentile(ready_seconds, 0.50),
                                .p95 = NearestRankPercentile(ready_seconds, 0.95),
                                .p99 = NearestRankPercentile(ready_seconds, 0.99)};
  }

  std::string counts =
      fmt::format("{} of {} desired nodes ready, {} staging, {} failed", status.ready_nodes,
                  status.desired_nodes, status.staging_nodes, status.failed_nodes);
  const bool over_quota = observation.quota_refusals && !observation.quota_refusals->empty();
  if (over_quota) {
    counts += "; fewer copies than asked for: the namespace's ModelQuota (see WithinQuota)";
  } else if (status.desired_nodes < observation.requested_nodes) {
    // Fewer eligible nodes than asked for is not a failure of what was placed, but say so.
    counts += fmt::format("; {} requested, {} matching nodes not Ready, cordoned or full",
                          observation.requested_nodes, observation.ineligible_nodes);
  }
  if (observation.quota_refusals && !observation.revoked) {
    if (over_quota) {
      set(kConditionWithinQuota, false, std::string(kReasonQuotaExceeded),
          fmt::format("{}", fmt::join(*observation.quota_refusals, "; ")));
    } else {
      set(kConditionWithinQuota, true, "WithinQuota",
          "every prestaged and pinned copy it asks for fits its namespace's ModelQuota");
    }
  }
  if (observation.revoked) {
    status.phase = std::string(api::kPhaseRevoked);
    status.revoked_by = observation.revoked_by;
    set(kConditionReady, false, "Revoked",
        observation.revoked_by
            ? fmt::format("ModelRevocation {} covers it ({}); no node is asked to hold it",
                          observation.revoked_by->name,
                          observation.revoked_by->reason.empty() ? "no reason given"
                                                                 : observation.revoked_by->reason)
            : std::string("spec.revoked is set; no node is asked to hold it"));
    api::PurgeProgress purge;
    std::vector<std::string> nodes;
    for (const HeldCopy& copy : observation.held) {
      purge.bytes_held += copy.bytes;
      nodes.push_back(copy.node);
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    purge.nodes_holding = static_cast<std::int32_t>(nodes.size());
    if (nodes.size() > api::kMaxPurgeNodesListed) nodes.resize(api::kMaxPurgeNodesListed);
    purge.nodes = nodes;
    if (purge.nodes_holding == 0) {
      set(kConditionPurged, true, "Purged", "no node holds any of its bytes");
    } else {
      set(kConditionPurged, false, "Purging",
          fmt::format("{} nodes still hold {} bytes of it (first: {}); each purges once no pod "
                      "mounts it, or at once with the annotation modelplane.io/purge: force (or a "
                      "ModelRevocation with force)",
                      purge.nodes_holding, purge.bytes_held, purge.nodes.front()));
    }
    status.purge = std::move(purge);
  } else if (status.desired_nodes == 0) {
    status.phase = std::string(api::kPhasePending);
    if (over_quota) {
      set(kConditionReady, false, std::string(kReasonQuotaExceeded),
          fmt::format("no copy granted: {}", fmt::join(*observation.quota_refusals, "; ")));
    } else if (observation.requested_nodes == 0) {
      set(kConditionReady, false, "NotPrestaged", "spec.prestage asks for no nodes");
    } else {
      set(kConditionReady, false, "NoEligibleNodes",
          fmt::format("{} nodes requested, none eligible ({} matching nodes not Ready, cordoned "
                      "or without room)",
                      observation.requested_nodes, observation.ineligible_nodes));
    }
  } else if (status.failed_nodes > 0) {
    status.phase = std::string(api::kPhaseDegraded);
    set(kConditionReady, false, "StagingFailed",
        fmt::format("{}; failed: {}", counts, fmt::join(failures, "; ")));
  } else if (status.ready_nodes == status.desired_nodes) {
    status.phase = std::string(api::kPhaseReady);
    set(kConditionReady, true, "NodesReady", counts);
  } else {
    status.phase = std::string(status.ready_nodes + status.staging_nodes > 0 ? api::kPhaseStaging
                                                                             : api::kPhasePending);
    set(kConditionReady, false, status.phase, counts);
  }
  return status;
}

}  // namespace modelplane::controller
