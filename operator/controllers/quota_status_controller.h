// The ModelQuota status controller: for a quota ("namespace/name"), writes what its namespace's
// revisions hold against quotas (the QuotaLedger's shares, or their cache entries for those not
// decided since this operator started) and which revisions the quotas cut, so that a tenant
// reads usage against the limits with `kubectl get modelquotas` or `kubectl modelplane quota`
// without reading any ModelCache: the status names only the namespace's own revisions.
// Thread safety: Reconcile runs concurrently for different keys.
#pragma once

#include <string>
#include <utility>

#include "core/workqueue/controller_runner.h"
#include "operator/controllers/controller_context.h"

namespace modelplane::controller {

class QuotaStatusController {
 public:
  explicit QuotaStatusController(ControllerContext context) : context_(std::move(context)) {}

  [[nodiscard]] core::Result<core::ReconcileResult> Reconcile(const std::string& key);

 private:
  ControllerContext context_;
};

}  // namespace modelplane::controller
