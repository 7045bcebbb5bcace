// The ModelRevision controller's quota step: it applies the ModelQuotas of the revision's
// namespace (core/api/model_quota.h) to the entries the other steps planned. First it ends pins
// past the namespace's pinTtlAfterLastUse (a rollback entry whose pin ended is removed, so its
// bytes become evictable); then it keeps the prestaged and pinned copies that fit
// (QuotaLedger::Decide, preferring nodes that already hold the revision) and removes the
// others. Entries for pods (in-use) and for a rollout's new pods (rollout) are never charged
// and never cut.
// Thread safety: as the controller; the ledger serializes decisions per process.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/api/model_quota.h"
#include "core/api/model_revision.h"
#include "core/api/timestamp.h"
#include "operator/controllers/controller_context.h"
#include "operator/controllers/entry_intent.h"
#include "operator/prestage/prestage_choice.h"

namespace modelplane::controller {

// ModelRevisions index: their namespace.
inline constexpr char kRevisionsByNamespace[] = "modelplane.io/namespace";
// ModelQuotas index: their namespace.
inline constexpr char kQuotasByNamespace[] = "modelplane.io/quota-namespace";

struct RevisionQuota {
  // Set while a ModelQuota applies to the namespace: why copies it asks for were cut (empty
  // when none were).
  std::optional<std::vector<std::string>> refusals;
  std::optional<core::api::Timestamp> next_lapse;  // the earliest pin the TTL will end
};

[[nodiscard]] RevisionQuota ApplyRevisionQuota(const ControllerContext& context,
                                               const core::api::ModelRevision& revision,
                                               const std::string& digest, std::int64_t total_bytes,
                                               const std::vector<PrestageCandidate>& candidates,
                                               std::map<std::string, EntryIntent>& desired);

// What the namespace's ModelQuotas allow together (none: no limit).
[[nodiscard]] core::api::NamespaceQuota QuotaOfNamespace(const ControllerContext& context,
                                                         const std::string& namespace_name);
// Every revision of the namespace, "namespace/name".
[[nodiscard]] std::vector<std::string> RevisionKeysOfNamespace(const ControllerContext& context,
                                                               const std::string& namespace_name);
// What a revision's entries in the ModelCache specs hold against quotas now: each prestage
// entry and each rollback pin that has not lapsed at its full size (status.totalBytes).
[[nodiscard]] core::api::QuotaBytes WrittenQuotaCharge(const ControllerContext& context,
                                                       const std::string& key);

}  // namespace modelplane::controller
