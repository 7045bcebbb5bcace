#include "scheduler-extender/revoked_revision_rule.h"

namespace modelplane::extender {

std::optional<std::string> RevokedRevisionRule::Filter(const NodeContext& context) const {
  if (!context.revision.revoked) return std::nullopt;
  return "modelplane: revision " + context.revision.key + " is revoked";
}

std::optional<std::int64_t> RevokedRevisionRule::Score(const NodeContext& /*context*/) const {
  return std::nullopt;
}

}  // namespace modelplane::extender
