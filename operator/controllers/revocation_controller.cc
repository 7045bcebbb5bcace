#include "operator/controllers/revocation_controller.h"

#include <set>

#include "core/api/model_revocation.h"
#include "operator/controllers/cache_entries.h"
#include "operator/controllers/held_copies.h"

namespace modelplane::controller {

core::Result<core::ReconcileResult> RevocationController::Reconcile(const std::string& name) {
  const core::ObjectPtr object = context_.revocations.store().Get(name);
  if (!object) return core::ReconcileResult::Done();
  auto revocation = api::ModelRevocationFromJson(*object);
  if (!revocation) return core::ReconcileResult::Done();  // the revision controller logs it

  api::ModelRevocationStatus status;
  std::set<std::string> nodes;
  for (const core::ObjectPtr& revision_object : context_.revisions.store().List()) {
    auto revision = api::ModelRevisionFromJson(*revision_object);
    if (!revision || !revision->status || !revision->status->revoked_by ||
        revision->status->revoked_by->name != name) {
      continue;
    }
    ++status.revisions;
    for (const HeldCopy& copy : HeldCopiesOf(context_.caches.store(), revision->status->digest)) {
      nodes.insert(copy.node);
    }
  }
  status.nodes_holding = static_cast<std::int32_t>(nodes.size());
  status.phase = std::string(nodes.empty() ? api::kRevocationPurged : api::kRevocationPurging);
  if (revocation->status == status) return core::ReconcileResult::Done();

  const nlohmann::json patch = {{"apiVersion", api::kApiVersion},
                                {"kind", api::kModelRevocationKind},
                                {"metadata", {{"name", name}}},
                                {"status", api::ToJson(status)}};
  auto written = context_.client.Patch(
      core::resources::ModelRevocations(), "", name, core::PatchType::kApply, patch,
      {.field_manager = std::string(kFieldManager), .force = true, .subresource = "status"});
  if (!written && written.error().code() != core::ErrorCode::kNotFound) {
    return std::unexpected(written.error());
  }
  if (written && (!revocation->status || revocation->status->phase != status.phase)) {
    context_.logger.Info("revocation_status_changed", {{"revocation", name},
                                                       {"phase", status.phase},
                                                       {"revisions", status.revisions},
                                                       {"nodes_holding", status.nodes_holding}});
  }
  return core::ReconcileResult::Done();
}

}  // namespace modelplane::controller
