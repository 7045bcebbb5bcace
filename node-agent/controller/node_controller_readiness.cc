// The readiness-gate side of the node's control loop (node_controller.h): patches the gated
// pods whose weights-ready condition changes (pod_verdicts.h decides which).
#include <fmt/format.h>

#include "core/api/object_key.h"
#include "core/api/timestamp.h"
#include "core/kube/resource_type.h"
#include "node-agent/controller/node_controller.h"
#include "node-agent/controller/pod_readiness.h"
#include "node-agent/controller/pod_verdicts.h"

namespace modelplane::agent {
core::Status NodeController::UpdateWeightsReady(
    const std::vector<core::Pod>& gated_pods, const WeightsVerdicts& weights,
    const std::vector<core::api::CachedRevision>& entries) {
  for (const PodVerdict& verdict : PlanPodVerdicts(gated_pods, weights, entries)) {
    const core::Pod& pod = *verdict.pod;
    if (!verdict.weights_ready) {
      if (auto patched = SetWeightsNotReady(pod, verdict.reason, verdict.message); !patched) {
        return std::unexpected(patched.error());
      }
      continue;
    }
    auto patched = dependencies_.client.Patch(
        core::resources::Pods(), pod.metadata.namespace_name, pod.metadata.name,
        core::PatchType::kStrategicMerge,
        WeightsReadyPatch(verdict.digest, verdict.tier, NowStamp()), {.subresource = "status"});
    if (!patched && patched.error().code() != core::ErrorCode::kNotFound) {
      return std::unexpected(
          patched.error().Wrap("setting weights-ready on pod " + pod.metadata.name));
    }
    if (patched) {
      logger_.Info("pod_weights_ready",
                   {{"pod", core::api::ObjectKey(pod.metadata.namespace_name, pod.metadata.name)},
                    {"digest", verdict.digest},
                    {"tier", verdict.tier}});
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
