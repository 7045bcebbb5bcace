#include "node-agent/controller/pod_readiness.h"

#include <algorithm>

#include <fmt/format.h>

namespace modelplane::agent {

std::optional<core::api::RevisionReference> NamedRevision(const core::Pod& pod) {
  const auto annotation =
      pod.metadata.annotations.find(std::string(core::api::kRevisionAnnotation));
  if (annotation == pod.metadata.annotations.end()) return std::nullopt;
  // One naming another namespace (edited after admission) must not borrow that namespace's
  // weights: the parser refuses it.
  auto reference =
      core::api::ParseRevisionAnnotation(annotation->second, pod.metadata.namespace_name);
  if (!reference) return std::nullopt;
  return *std::move(reference);
}

std::optional<core::api::RevisionReference> GatedRevision(const core::Pod& pod) {
  const auto& gates = pod.readiness_gates;
  if (std::find(gates.begin(), gates.end(), core::api::kWeightsReadyCondition) == gates.end()) {
    return std::nullopt;
  }
  return NamedRevision(pod);
}

bool PodIsLive(const core::Pod& pod) {
  return pod.phase != "Succeeded" && pod.phase != "Failed";
}

bool WeightsReadyIsTrue(const core::Pod& pod) {
  const core::PodCondition* condition =
      pod.FindCondition(std::string(core::api::kWeightsReadyCondition));
  return condition != nullptr && condition->status == "True";
}

namespace {

nlohmann::json ConditionPatch(std::string_view status, std::string_view reason,
                              std::string_view message, std::string_view now_rfc3339) {
  return {{"status",
           {{"conditions", nlohmann::json::array({{{"type", core::api::kWeightsReadyCondition},
                                                   {"status", status},
                                                   {"reason", reason},
                                                   {"message", message},
                                                   {"lastTransitionTime", now_rfc3339}}})}}}};
}

}  // namespace

nlohmann::json WeightsReadyPatch(std::string_view digest, std::string_view tier,
                                 std::string_view now_rfc3339) {
  return ConditionPatch("True", "WeightsVerified",
                        fmt::format("revision {} is verified in this node's cache ({})", digest,
                                    tier.empty() ? "local" : tier),
                        now_rfc3339);
}

nlohmann::json WeightsNotReadyPatch(std::string_view reason, std::string_view message,
                                    std::string_view now_rfc3339) {
  return ConditionPatch("False", reason, message, now_rfc3339);
}

}  // namespace modelplane::agent
