// Which gated pods on this node change their weights-ready condition on this pass, decided
// from the weights verdicts of the pass (revision_entries.h). Pure; the controller patches the
// pods (node_controller_readiness.cc).
//
// A pod whose condition is not True goes True once its revision is verified here, with the tier
// that served it. A pod whose condition is True goes False when its revision is revoked (reason
// RevisionRevoked) or no longer verified here (WeightsNotVerified): the readiness gate is the
// second protection after the scheduling gate. Any other pod is left as it is.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/api/model_cache.h"
#include "core/kube/builtin_types.h"
#include "node-agent/controller/revision_entries.h"

namespace modelplane::agent {

struct PodVerdict {
  const core::Pod* pod = nullptr;
  bool weights_ready = false;
  // weights_ready: the digest verified and the tier that served it.
  std::string digest;
  std::string tier;
  // Not weights_ready: why (kReasonRevisionRevoked, kReasonWeightsNotVerified) and a message.
  std::string_view reason;
  std::string message;
};

// `gated_pods` must each name a revision (node_demand.h gathers them so); `entries` are the
// status entries of the pass, for the tier.
[[nodiscard]] std::vector<PodVerdict> PlanPodVerdicts(
    const std::vector<core::Pod>& gated_pods, const WeightsVerdicts& weights,
    const std::vector<core::api::CachedRevision>& entries);

}  // namespace modelplane::agent
