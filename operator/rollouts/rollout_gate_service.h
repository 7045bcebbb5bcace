// The HTTP side of rollout_gate.h: POST /gates/<hook> with a Flagger webhook body
// ({"name", "namespace", "phase", "checksum", "metadata"}), answered 200 to go on and 403 with
// the reason to hold. It reads what it needs from the API server on each call (the target
// Deployment, its primary, the ModelRevision, the target's pods), so every operator replica can
// answer, leader or not; a progressive-delivery controller calls it about once per interval.
// The target is the webhook's `name`, or metadata "deployment" when the Canary is named
// otherwise; metadata "nodes" overrides how many nodes the canary needs.
// Thread safety: Handle may run on any number of server threads at once.
#pragma once

#include <memory>
#include <string_view>

#include "core/error/error.h"
#include "core/http/router.h"
#include "core/kube/kube_client.h"
#include "core/log/logger.h"
#include "core/metrics/metrics_registry.h"
#include "operator/rollouts/rollout_gate.h"

namespace modelplane::controller {

inline constexpr std::string_view kRolloutGatePathPrefix = "/gates/";

class RolloutGateService {
 public:
  [[nodiscard]] static core::Result<std::unique_ptr<RolloutGateService>> Create(
      core::KubeClient& client, core::Logger logger, core::MetricsRegistry& metrics);

  void AddRoutes(core::Router& router) const;
  [[nodiscard]] core::ServerResponse Handle(const core::ServerRequest& request) const;

 private:
  RolloutGateService(core::KubeClient& client, core::Logger logger, core::CounterFamily* answers)
      : client_(client), logger_(std::move(logger)), answers_(answers) {}
  [[nodiscard]] core::Result<GateFacts> Gather(const std::string& namespace_name,
                                               const std::string& target, RolloutHook hook) const;

  core::KubeClient& client_;
  const core::Logger logger_;
  core::CounterFamily* answers_;
};

}  // namespace modelplane::controller
