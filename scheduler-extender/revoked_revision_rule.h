// A revoked revision (spec.revoked) must run nowhere: every node fails the filter with a reason
// that says so, and kube-scheduler reports the pod unschedulable with it. Filter-only: it has no
// opinion on scores.
// Thread safety: immutable.
#pragma once

#include "scheduler-extender/placement_rule.h"

namespace modelplane::extender {

class RevokedRevisionRule final : public PlacementRule {
 public:
  [[nodiscard]] std::string_view Name() const override { return "revoked-revision"; }
  [[nodiscard]] bool AppliesTo(const RevisionInfo& revision) const override {
    return revision.revoked;
  }
  [[nodiscard]] RuleVerdict Judge(const NodeContext& context) const override;
};

}  // namespace modelplane::extender
