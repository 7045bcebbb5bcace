#include "operator/quotas/pin_lapse.h"

namespace modelplane::controller {

core::api::Timestamp PinLapse(std::optional<core::api::Timestamp> node_last_used,
                              std::optional<core::api::Timestamp> any_last_used,
                              core::api::Timestamp created, std::chrono::seconds ttl) {
  if (node_last_used) return *node_last_used + ttl;
  if (any_last_used) return *any_last_used + ttl;
  return created + ttl;
}

}  // namespace modelplane::controller
