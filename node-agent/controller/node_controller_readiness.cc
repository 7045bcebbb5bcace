// The readiness-gate side of the node's control loop (node_controller.h): a gated pod's
// weights-ready condition follows whether its revision is verified in this node's cache.
#include <fmt/format.h>

#include "core/api/object_key.h"
#include "core/api/timestamp.h"
#include "core/kube/resource_type.h"
#include "node-agent/controller/node_controller.h"
#include "node-agent/controller/pod_readiness.h"

namespace modelplane::agent {
namespace {

// Why a pod whose weights-ready is True must go back to False, if it must.
struct LostWeights {
  std::string_view reason;
  std::string message;
};

std::optional<LostWeights> WeightsLost(const std::string& key,
                                       const std::map<std::string, std::string>& revoked,
                                       const std::map<std::string, std::string>& unverified) {
  if (auto found = revoked.find(key); found != revoked.end()) {
    return LostWeights{kReasonRevisionRevoked,
                       fmt::format("revision {} ({}) is revoked", key, found->second)};
  }
  if (auto found = unverified.find(key); found != unverified.end()) {
    return LostWeights{kReasonWeightsNotVerified,
                       fmt::format("revision {} ({}) is no longer verified in this node's cache",
                                   key, found->second)};
  }
  return std::nullopt;
}

}  // namespace

core::Status NodeController::UpdateWeightsReady(
    const std::vector<core::Pod>& gated_pods, const WeightsVerdicts& weights,
    const std::vector<core::api::CachedRevision>& entries) {
  for (const core::Pod& pod : gated_pods) {
    const auto reference = GatedRevision(pod);
    const std::string key = core::api::ObjectKey(reference->namespace_name, reference->name);
    if (WeightsReadyIsTrue(pod)) {
      if (auto lost = WeightsLost(key, weights.revoked, weights.unverified)) {
        if (auto patched = SetWeightsNotReady(pod, lost->reason, lost->message); !patched) {
          return std::unexpected(patched.error());
        }
      }
      continue;
    }
    const auto ready = weights.ready.find(key);
    if (ready == weights.ready.end()) continue;
    std::string tier;
    for (const auto& entry : entries) {
      if (entry.digest == ready->second) tier = entry.source_tier;
    }
    auto patched = dependencies_.client.Patch(core::resources::Pods(), pod.metadata.namespace_name,
                                              pod.metadata.name, core::PatchType::kStrategicMerge,
                                              WeightsReadyPatch(ready->second, tier, NowStamp()),
                                              {.subresource = "status"});
    if (!patched && patched.error().code() != core::ErrorCode::kNotFound) {
      return std::unexpected(
          patched.error().Wrap("setting weights-ready on pod " + pod.metadata.name));
    }
    if (patched) {
      logger_.Info("pod_weights_ready",
                   {{"pod", core::api::ObjectKey(pod.metadata.namespace_name, pod.metadata.name)},
                    {"digest", ready->second},
                    {"tier", tier}});
    }
  }
  return core::Ok();
}

std::string NodeController::NowStamp() const {
  return core::api::FormatTimestamp(
      std::chrono::time_point_cast<std::chrono::microseconds>(dependencies_.clock.WallNow()));
}

core::Status NodeController::SetWeightsNotReady(const core::Pod& pod, std::string_view reason,
                                                const std::string& message) {
  auto patched = dependencies_.client.Patch(core::resources::Pods(), pod.metadata.namespace_name,
                                            pod.metadata.name, core::PatchType::kStrategicMerge,
                                            WeightsNotReadyPatch(reason, message, NowStamp()),
                                            {.subresource = "status"});
  if (!patched && patched.error().code() != core::ErrorCode::kNotFound) {
    return std::unexpected(
        patched.error().Wrap("setting weights-ready False on pod " + pod.metadata.name));
  }
  if (patched) {
    logger_.Warn("pod_weights_not_ready",
                 {{"pod", core::api::ObjectKey(pod.metadata.namespace_name, pod.metadata.name)},
                  {"reason", reason},
                  {"message", message}});
  }
  return core::Ok();
}

}  // namespace modelplane::agent
