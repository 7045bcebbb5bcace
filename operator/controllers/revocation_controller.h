// The ModelRevocation status controller: for a revocation's name, counts the ModelRevisions it
// covers (those whose status.revokedBy names it; the ModelRevision controller decides which)
// and the nodes whose caches still hold any of their bytes, and writes both with the phase
// (Purging while any node holds bytes, Purged after), so `kubectl get modelrevocations` shows
// the purge fleet-wide.
// Thread safety: Reconcile runs concurrently for different names.
#pragma once

#include <string>
#include <utility>

#include "core/workqueue/controller_runner.h"
#include "operator/controllers/controller_context.h"

namespace modelplane::controller {

class RevocationController {
 public:
  explicit RevocationController(ControllerContext context) : context_(std::move(context)) {}

  [[nodiscard]] core::Result<core::ReconcileResult> Reconcile(const std::string& name);

 private:
  ControllerContext context_;
};

}  // namespace modelplane::controller
