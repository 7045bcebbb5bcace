// The rollout half of the ModelRevision controller: for one revision it gathers the workloads
// that name it now or named it before (workload_inventory.h), plans what they ask of the node
// caches (rollouts/rollout_plan.h), says which of their gated pods must wait for the rollout's
// prestage, tells each rolling workload, as an Event on it, when its new revision is
// prestaged where its pods run, and predicts from its source's admission budget how long that
// takes (rollouts/rollout_readiness.h).
// Thread safety: Plan and Report may run concurrently for different revisions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/api/model_revision.h"
#include "operator/controllers/change_reporter.h"
#include "operator/controllers/controller_context.h"
#include "operator/controllers/rollout_metrics.h"
#include "operator/rollouts/rollout_plan.h"

namespace modelplane::controller {

struct RevisionRolloutPlan {
  RolloutPlan plan;
  std::map<std::string, Workload> workloads;  // by Workload::Key()
  // Gated pods (uid) that wait for their workload's prestage, with what to tell them.
  std::map<std::string, std::string> held_pods;
  // The workloads rolling to it that are not complete, for the rollout gauges.
  std::vector<RolloutReadiness> readiness;
};

class RevisionRollouts {
 public:
  explicit RevisionRollouts(ControllerContext context)
      : context_(context), reporter_(context.events, context.logger) {}

  [[nodiscard]] RevisionRolloutPlan Plan(const std::string& revision_key,
                                         const core::api::ModelRevision& revision,
                                         std::int64_t total_bytes,
                                         const std::vector<PrestageCandidate>& caches,
                                         const std::string& digest);
  // An Event on each rolling workload when its barrier changes (met or not).
  void Report(const std::string& revision_key, const RevisionRolloutPlan& rollouts);

 private:
  ControllerContext context_;
  ChangeReporter reporter_;
};

}  // namespace modelplane::controller
