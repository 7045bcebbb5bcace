// The ModelCache lifecycle controller: one ModelCache per Node, named after it. For a node name
// it creates the ModelCache when the Node exists and the cache does not (owned by the Node, so
// the garbage collector also removes it), adopts one its agent made first (the same owner), deletes
// it when the Node is gone, and prunes spec entries whose ModelRevision no longer exists (a
// revision deleted while no operator ran, or whose finalizer someone removed by hand). It also
// writes what the fleet knows about each digest the node holds (spec.holdings: copies elsewhere,
// revocation) and how often the agent may write progress (holdings.h), under a field manager of
// its own. Thread safety: Reconcile runs concurrently for different node names.
#pragma once

#include <string>
#include <utility>

#include "core/workqueue/controller_runner.h"
#include "operator/controllers/controller_context.h"

namespace modelplane::controller {

// spec.holdings and spec.progressIntervalSeconds are applied under this manager, apart from the
// entries (kFieldManager) and the grants (the admission controller's). A namespace-scoped
// operator appends its namespace: server-side apply replaces everything one manager owns, so
// scoped operators sharing a name would remove each other's holdings on every write.
inline constexpr std::string_view kHoldingsFieldManager = "modelplane-operator-holdings";

class ModelCacheController {
 public:
  explicit ModelCacheController(ControllerContext context) : context_(std::move(context)) {}

  [[nodiscard]] core::Result<core::ReconcileResult> Reconcile(const std::string& node_name);

 private:
  core::Status CreateCache(const nlohmann::json& node);
  core::Status AdoptCache(const nlohmann::json& node, const nlohmann::json& cache);
  core::Status DeleteCache(const nlohmann::json& cache);
  core::Status PruneEntries(const nlohmann::json& cache);
  core::Status WriteHoldings(const core::ObjectPtr& cache);

  ControllerContext context_;
};

}  // namespace modelplane::controller
