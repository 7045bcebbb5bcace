#include "operator/controllers/quota_status_controller.h"

#include "core/api/model_quota.h"
#include "operator/controllers/cache_entries.h"
#include "operator/controllers/revision_quota.h"

namespace modelplane::controller {

core::Result<core::ReconcileResult> QuotaStatusController::Reconcile(const std::string& key) {
  if (context_.quotas == nullptr || context_.quota_ledger == nullptr) {
    return core::ReconcileResult::Done();
  }
  const core::ObjectPtr object = context_.quotas->store().Get(key);
  if (!object) return core::ReconcileResult::Done();
  auto quota = api::ModelQuotaFromJson(*object);
  if (!quota) return core::ReconcileResult::Done();  // the revision controller logs it
  const std::string& namespace_name = quota->metadata.namespace_name;

  const QuotaLedger::Usage usage = context_.quota_ledger->UsageOf(
      RevisionKeysOfNamespace(context_, namespace_name),
      [this](const std::string& revision) { return WrittenQuotaCharge(context_, revision); });
  api::ModelQuotaStatus status{.observed_generation = quota->metadata.generation,
                               .used = usage.used,
                               .limited_count = static_cast<std::int32_t>(usage.limited.size())};
  for (const std::string& revision : usage.limited) {
    if (status.limited_revisions.size() == api::kMaxLimitedRevisions) break;
    status.limited_revisions.push_back(revision.substr(revision.find('/') + 1));
  }
  if (quota->status == status) return core::ReconcileResult::Done();

  const nlohmann::json patch = {
      {"apiVersion", api::kApiVersion},
      {"kind", api::kModelQuotaKind},
      {"metadata", {{"name", quota->metadata.name}, {"namespace", namespace_name}}},
      {"status", api::ToJson(status)}};
  auto written = context_.client.Patch(
      core::resources::ModelQuotas(), namespace_name, quota->metadata.name, core::PatchType::kApply,
      patch, {.field_manager = std::string(kFieldManager), .force = true, .subresource = "status"});
  if (!written && written.error().code() != core::ErrorCode::kNotFound) {
    return std::unexpected(written.error());
  }
  return core::ReconcileResult::Done();
}

}  // namespace modelplane::controller
