#include "node-agent/controller/pod_verdicts.h"

#include <fmt/format.h>

#include "core/api/object_key.h"
#include "node-agent/controller/pod_readiness.h"

namespace modelplane::agent {
namespace {

// The verdict that takes a pod's weights-ready back to False, if one must.
std::optional<PodVerdict> WeightsLost(const core::Pod& pod, const std::string& key,
                                      const WeightsVerdicts& weights) {
  if (auto found = weights.revoked.find(key); found != weights.revoked.end()) {
    return PodVerdict{.pod = &pod,
                      .reason = kReasonRevisionRevoked,
                      .message = fmt::format("revision {} ({}) is revoked", key, found->second)};
  }
  if (auto found = weights.unverified.find(key); found != weights.unverified.end()) {
    return PodVerdict{
        .pod = &pod,
        .reason = kReasonWeightsNotVerified,
        .message = fmt::format("revision {} ({}) is no longer verified in this node's cache", key,
                               found->second)};
  }
  return std::nullopt;
}

}  // namespace

std::vector<PodVerdict> PlanPodVerdicts(const std::vector<core::Pod>& gated_pods,
                                        const WeightsVerdicts& weights,
                                        const std::vector<core::api::CachedRevision>& entries) {
  std::vector<PodVerdict> verdicts;
  for (const core::Pod& pod : gated_pods) {
    const auto reference = GatedRevision(pod);
    if (!reference) continue;
    const std::string key = core::api::ObjectKey(reference->namespace_name, reference->name);
    if (WeightsReadyIsTrue(pod)) {
      if (auto lost = WeightsLost(pod, key, weights)) verdicts.push_back(std::move(*lost));
      continue;
    }
    const auto ready = weights.ready.find(key);
    if (ready == weights.ready.end()) continue;
    PodVerdict verdict{.pod = &pod, .weights_ready = true, .digest = ready->second};
    for (const core::api::CachedRevision& entry : entries) {
      if (entry.digest == ready->second) verdict.tier = entry.source_tier;
    }
    verdicts.push_back(std::move(verdict));
  }
  return verdicts;
}

}  // namespace modelplane::agent
