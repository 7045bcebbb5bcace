// The gate half of the ModelRevision controller: for one revision it reads the pods that name
// it, plans which gated ones may go (gating/gate_planner.h), lets them go with one narrowing
// patch each, and tells every pod still waiting what it waits for, as an Event on the pod
// (`kubectl describe pod` is enough to know why a pod is gated).
//
// Events are written when what a pod waits for changes, not on every pass (ChangeReporter).
// A pod that names LoRA adapters goes only where they are Ready too, and waits, told why, while
// one cannot serve it (pod_adapters.h).
//
// A pod let go is remembered (with the nodes it was narrowed to) until the informer shows it
// ungated, bound or gone: a pass that runs before the watch delivers the patch must count it
// as let go, not plan it again as if its gate were still there (as controller-runtime's
// expectations do for pods a ReplicaSet just created).
// Thread safety: Plan, Apply and ReportBlocked may run concurrently for different revisions.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error/error.h"
#include "operator/controllers/change_reporter.h"
#include "operator/controllers/controller_context.h"
#include "operator/gating/gate_planner.h"

namespace modelplane::controller {

// A gated pod as Apply needs it.
struct GatedPod {
  nlohmann::json pod;
  // Written as it is let go (UngatePatch): the revision's digest, its adapters' lora-modules.
  std::map<std::string, std::string> annotations;
  // The Event while it is not let go.
  std::string wait_type = "Normal";
  std::string wait_reason = "WaitingForWeights";
};

struct RevisionGates {
  GatePlan plan;
  std::vector<std::string> bound_nodes;  // sorted: nodes running a pod of the revision
  std::vector<GatedPod> gated;           // the pods plan.decisions refer to, in order
};

class PodGates {
 public:
  explicit PodGates(ControllerContext context)
      : context_(context), reporter_(context.events, context.logger) {}

  // `caches` as the revision's placement sees them (held state, room per node). `held`: gated
  // pods (by uid) that must wait whatever the caches hold (a rollout's prestage is not done),
  // with what to tell them.
  [[nodiscard]] RevisionGates Plan(const std::string& revision_key, const std::string& digest,
                                   std::int64_t total_bytes,
                                   const std::vector<PrestageCandidate>& caches,
                                   const std::map<std::string, std::string>& held = {});
  // Lets go the pods the plan allows and reports on the others. Returns the first error of a
  // patch that failed (the others are still tried); a conflict is retryable.
  [[nodiscard]] core::Status Apply(const std::string& revision_key, const RevisionGates& gates);
  // For every gated pod of a revision that cannot be staged (missing, invalid, revoked): an
  // Event with `reason` and `message`, once per change.
  void ReportBlocked(const std::string& revision_key, const std::string& type,
                     const std::string& reason, const std::string& message);

 private:
  void Report(const nlohmann::json& pod, const std::string& type, const std::string& reason,
              const std::string& message);

  struct LetGo {
    std::vector<std::string> nodes;
    core::Clock::SteadyTime at;
  };
  // What the informer may not show yet: pod uid -> the nodes it was let go to.
  std::optional<std::vector<std::string>> LetGoTo(const std::string& uid);
  void ForgetLetGo(const std::string& uid);

  ControllerContext context_;
  std::mutex let_go_mutex_;
  std::unordered_map<std::string, LetGo> let_go_;
  ChangeReporter reporter_;
};

}  // namespace modelplane::controller
