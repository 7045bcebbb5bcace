#include "operator/rollouts/rollout_gate.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/api/object_key.h"
#include "core/api/serving_pod.h"
#include "core/json/json_lookup.h"
#include "operator/rollouts/workload.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;

bool WeightsReady(const json& pod) {
  if (!pod.contains("status") || !pod["status"].is_object()) return false;
  for (const json& condition : pod["status"].value("conditions", json::array())) {
    if (condition.is_object() && condition.value("type", "") == core::api::kWeightsReadyCondition) {
      return condition.value("status", "") == "True";
    }
  }
  return false;
}

GateAnswer EnoughNodes(const GateFacts& facts, const std::string& revision, int needed,
                       std::string_view for_what) {
  const std::int64_t ready = core::IntegerMember(facts.revision, {"status", "readyNodes"}, 0);
  const std::string key = core::api::ObjectKey(facts.namespace_name, revision);
  if (ready >= needed) {
    return {.allowed = true,
            .reason = fmt::format("ModelRevision {} is Ready on {} node{}; {} needs {}", key, ready,
                                  ready == 1 ? "" : "s", for_what, needed)};
  }
  return {.reason = fmt::format(
              "ModelRevision {} is Ready on {} node{}; {} needs {} (staging {}; spec.prestage "
              "decides where it is staged before pods exist)",
              key, ready, ready == 1 ? "" : "s", for_what, needed,
              core::IntegerMember(facts.revision, {"status", "stagingNodes"}, 0))};
}

}  // namespace

std::optional<RolloutHook> RolloutHookFromPath(std::string_view name) {
  if (name == "confirm-rollout") return RolloutHook::kConfirmRollout;
  if (name == "confirm-promotion") return RolloutHook::kConfirmPromotion;
  if (name == "confirm-traffic-increase") return RolloutHook::kConfirmTrafficIncrease;
  return std::nullopt;
}

std::string_view RolloutHookName(RolloutHook hook) {
  switch (hook) {
    case RolloutHook::kConfirmRollout: return "confirm-rollout";
    case RolloutHook::kConfirmPromotion: return "confirm-promotion";
    case RolloutHook::kConfirmTrafficIncrease: return "confirm-traffic-increase";
  }
  return "unknown";
}

std::string TargetRevision(const GateFacts& facts) {
  if (!facts.deployment.is_object() || !facts.deployment.contains("spec")) return {};
  const json& spec = facts.deployment["spec"];
  if (!spec.is_object() || !spec.contains("template")) return {};
  return TemplateRevision(spec["template"], facts.namespace_name);
}

GateAnswer DecideGate(RolloutHook hook, const GateFacts& facts) {
  const std::string target = core::api::ObjectKey(facts.namespace_name, facts.target);
  if (!facts.deployment.is_object()) {
    return {.reason = fmt::format("Deployment {} does not exist", target)};
  }
  const std::string revision = TargetRevision(facts);
  if (revision.empty()) {
    return {
        .allowed = true,
        .reason = fmt::format("Deployment {} names no ModelRevision: nothing to wait for", target)};
  }
  const std::string key = core::api::ObjectKey(facts.namespace_name, revision);
  if (!facts.revision.is_object()) {
    return {.reason = fmt::format("ModelRevision {} does not exist", key)};
  }
  if (core::BoolMember(facts.revision, {"spec", "revoked"}) ||
      !core::StringMember(facts.revision, {"status", "revokedBy", "name"}).empty()) {
    return {.reason = fmt::format("ModelRevision {} is revoked", key)};
  }
  switch (hook) {
    case RolloutHook::kConfirmRollout: {
      const int replicas =
          static_cast<int>(core::IntegerMember(facts.deployment, {"spec", "replicas"}, 1));
      const int needed = facts.nodes_override.value_or(std::max(1, replicas));
      return EnoughNodes(facts, revision, needed, "the canary");
    }
    case RolloutHook::kConfirmPromotion: {
      const int replicas =
          facts.primary.is_object()
              ? static_cast<int>(core::IntegerMember(facts.primary, {"spec", "replicas"}, 1))
              : static_cast<int>(core::IntegerMember(facts.deployment, {"spec", "replicas"}, 1));
      const int needed = facts.nodes_override.value_or(std::max(1, replicas));
      return EnoughNodes(facts, revision, needed, "promoting the primary");
    }
    case RolloutHook::kConfirmTrafficIncrease: {
      int naming = 0;
      int ready = 0;
      for (const json& pod : facts.pods) {
        const std::string named =
            pod.contains("metadata") && pod["metadata"].contains("annotations")
                ? pod["metadata"]["annotations"].value(std::string(core::api::kRevisionAnnotation),
                                                       "")
                : std::string();
        auto reference = core::api::ParseRevisionAnnotation(named, facts.namespace_name);
        if (!reference || reference->name != revision) continue;
        ++naming;
        if (WeightsReady(pod)) ++ready;
      }
      if (naming > 0 && ready == naming) {
        return {.allowed = true,
                .reason =
                    fmt::format("all {} canary pods have ModelRevision {} verified", naming, key)};
      }
      return {.reason = fmt::format("{} of {} canary pods have ModelRevision {} verified on their "
                                    "node",
                                    ready, naming, key)};
    }
  }
  return {.reason = "unknown hook"};
}

}  // namespace modelplane::controller
