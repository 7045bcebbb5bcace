// Answers for a progressive-delivery controller's webhooks (Flagger's confirm-rollout,
// confirm-promotion and confirm-traffic-increase): may the canary's next step go, given where
// its ModelRevision is verified? Pure decisions over the objects the HTTP side fetched, so the
// rules are unit-tested without a server.
//
//   confirm-rollout      the revision the target's template names is Ready on at least the
//                        nodes the canary needs (its replicas, or metadata "nodes");
//   confirm-promotion    the same for the primary's replicas (promotion rolls the primary);
//   confirm-traffic-increase
//                        every canary pod naming the revision has weights-ready True.
// A target that names no revision has nothing to wait for (200). Everything else that is not a
// yes is 403 with the reason, which the progressive-delivery controller logs and retries.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace modelplane::controller {

enum class RolloutHook { kConfirmRollout, kConfirmPromotion, kConfirmTrafficIncrease };

[[nodiscard]] std::optional<RolloutHook> RolloutHookFromPath(std::string_view name);
[[nodiscard]] std::string_view RolloutHookName(RolloutHook hook);

struct GateAnswer {
  bool allowed = false;
  std::string reason;
};

// What the HTTP side found. Objects are null when they do not exist.
struct GateFacts {
  std::string namespace_name;
  std::string target;                 // the canary Deployment
  nlohmann::json deployment;          // the target Deployment
  nlohmann::json primary;             // "<target>-primary", for promotion
  nlohmann::json revision;            // the ModelRevision the target's template names
  std::vector<nlohmann::json> pods;   // the target's pods (its selector)
  std::optional<int> nodes_override;  // the webhook's metadata "nodes"
};

// The revision name the target's template names, "" for none.
[[nodiscard]] std::string TargetRevision(const GateFacts& facts);

[[nodiscard]] GateAnswer DecideGate(RolloutHook hook, const GateFacts& facts);

}  // namespace modelplane::controller
