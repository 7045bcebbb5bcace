#include "scheduler-extender/revoked_revision_rule.h"

namespace modelplane::extender {

RuleVerdict RevokedRevisionRule::Judge(const NodeContext& context) const {
  if (!context.revision.revoked) return {};
  return {.reason = "modelplane: revision " + context.revision.key + " is revoked"};
}

}  // namespace modelplane::extender
