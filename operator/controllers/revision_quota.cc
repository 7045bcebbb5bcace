#include "operator/controllers/revision_quota.h"

#include <algorithm>

#include "core/api/object_key.h"
#include "core/json/json_lookup.h"
#include "operator/controllers/cache_entries.h"
#include "operator/controllers/held_copies.h"
#include "operator/quotas/pin_lapse.h"
#include "operator/quotas/quota_ledger.h"

namespace modelplane::controller {
namespace {

// The nodes of `desired` whose entry has `reason` (and a pin, when `pinned`), those that hold
// the revision Ready first, then those staging it, then by name: a quota keeps the front.
std::vector<std::string> AskedNodes(const std::map<std::string, EntryIntent>& desired,
                                    std::string_view reason, bool pinned,
                                    const std::map<std::string, HeldState>& held) {
  std::vector<std::string> nodes;
  for (const auto& [node, intent] : desired) {
    if (intent.reason == reason && (!pinned || intent.pinned)) nodes.push_back(node);
  }
  const auto rank = [&](const std::string& node) {
    const auto found = held.find(node);
    if (found == held.end()) return 2;
    return found->second == HeldState::kReady ? 0 : found->second == HeldState::kStaging ? 1 : 2;
  };
  std::stable_sort(nodes.begin(), nodes.end(),
                   [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  return nodes;
}

// Removes the nodes of `asked` that `granted` (a prefix of it) leaves out.
void RemoveCut(std::map<std::string, EntryIntent>& desired, const std::vector<std::string>& asked,
               std::size_t granted) {
  for (std::size_t i = granted; i < asked.size(); ++i) desired.erase(asked[i]);
}

// Ends the pins past the TTL; returns when the next one ends.
std::optional<api::Timestamp> EndLapsedPins(const ControllerContext& context,
                                            const api::ModelRevision& revision,
                                            const std::string& digest, std::chrono::seconds ttl,
                                            std::map<std::string, EntryIntent>& desired) {
  std::map<std::string, api::Timestamp> last_used;  // by node
  std::optional<api::Timestamp> any_last_used;
  ForEachHeldEntry(context.caches.store(), context.parsed_caches, digest,
                   [&](const api::ModelCache& cache, const api::CachedRevision& cached) {
                     if (!cached.last_used) return;
                     last_used[cache.metadata.name] = *cached.last_used;
                     any_last_used =
                         std::max(any_last_used.value_or(*cached.last_used), *cached.last_used);
                   });
  const api::Timestamp now =
      std::chrono::time_point_cast<std::chrono::microseconds>(context.clock.WallNow());
  const api::Timestamp created = revision.metadata.creation_timestamp.value_or(now);
  std::optional<api::Timestamp> next;
  for (auto entry = desired.begin(); entry != desired.end();) {
    EntryIntent& intent = entry->second;
    if (!intent.pinned) {
      ++entry;
      continue;
    }
    const auto node_used = last_used.find(entry->first);
    const api::Timestamp lapse =
        PinLapse(node_used == last_used.end() ? std::nullopt
                                              : std::optional<api::Timestamp>(node_used->second),
                 any_last_used, created, ttl);
    if (lapse <= now) {
      // A rollback entry exists only for its pin; any other keeps its reason, unpinned.
      if (intent.reason == api::kReasonRollback) {
        entry = desired.erase(entry);
        continue;
      }
      intent.pinned = false;
      intent.pinned_until.reset();
    } else {
      intent.pinned_until = std::min(intent.pinned_until.value_or(lapse), lapse);
      next = std::min(next.value_or(lapse), lapse);
    }
    ++entry;
  }
  return next;
}

}  // namespace

api::NamespaceQuota QuotaOfNamespace(const ControllerContext& context,
                                     const std::string& namespace_name) {
  if (context.quotas == nullptr) return {};
  std::vector<api::ModelQuota> quotas;
  for (const core::ObjectPtr& object :
       context.quotas->store().ByIndex(kQuotasByNamespace, namespace_name)) {
    auto quota = api::ModelQuotaFromJson(*object);
    if (!quota) {
      // The CRD's schema refuses what the parser would; anything else is not ours to act on.
      context.logger.Warn("model_quota_unreadable", {{"quota", core::ObjectStore::KeyOf(*object)},
                                                     {"error", quota.error().ToString()}});
      continue;
    }
    quotas.push_back(std::move(*quota));
  }
  return api::CombineQuotas(quotas);
}

std::vector<std::string> RevisionKeysOfNamespace(const ControllerContext& context,
                                                 const std::string& namespace_name) {
  std::vector<std::string> keys;
  for (const core::ObjectPtr& object :
       context.revisions.store().ByIndex(kRevisionsByNamespace, namespace_name)) {
    keys.push_back(core::ObjectStore::KeyOf(*object));
  }
  return keys;
}

api::QuotaBytes WrittenQuotaCharge(const ControllerContext& context, const std::string& key) {
  api::QuotaBytes charge;
  const core::ObjectPtr revision = context.revisions.store().Get(key);
  if (!revision) return charge;
  const std::int64_t bytes = core::IntegerMember(*revision, {"status", "totalBytes"});
  const api::Timestamp now =
      std::chrono::time_point_cast<std::chrono::microseconds>(context.clock.WallNow());
  for (const core::ObjectPtr& object : context.caches.store().ByIndex(kCachesByRevision, key)) {
    const auto cache = context.parsed_caches.Get(object);
    if (!*cache) continue;
    for (const api::DesiredRevision& entry : (*cache)->spec.revisions) {
      if (RevisionKey(entry.revision) != key) continue;
      if (entry.reason == api::kReasonPrestage) {
        charge = api::SaturatingSum(charge, {.prestaged_bytes = bytes});
      }
      if (entry.reason == api::kReasonRollback && entry.pinned &&
          (!entry.pinned_until || *entry.pinned_until > now)) {
        charge = api::SaturatingSum(charge, {.pinned_bytes = bytes});
      }
    }
  }
  return charge;
}

RevisionQuota ApplyRevisionQuota(const ControllerContext& context,
                                 const api::ModelRevision& revision, const std::string& digest,
                                 std::int64_t total_bytes,
                                 const std::vector<PrestageCandidate>& candidates,
                                 std::map<std::string, EntryIntent>& desired) {
  RevisionQuota result;
  const std::string& namespace_name = revision.metadata.namespace_name;
  const std::string key = core::api::ObjectKey(namespace_name, revision.metadata.name);
  const api::NamespaceQuota quota = QuotaOfNamespace(context, namespace_name);
  if (quota.pin_ttl_after_last_use) {
    result.next_lapse =
        EndLapsedPins(context, revision, digest, *quota.pin_ttl_after_last_use, desired);
  }
  if (context.quota_ledger == nullptr) return result;
  std::map<std::string, HeldState> held;
  for (const PrestageCandidate& candidate : candidates) held[candidate.name] = candidate.held;
  const QuotaAsk ask{.bytes_per_copy = total_bytes,
                     .prestage_nodes = AskedNodes(desired, api::kReasonPrestage, false, held),
                     .pinned_nodes = AskedNodes(desired, api::kReasonRollback, true, held)};
  const QuotaGrant grant = context.quota_ledger->Decide(
      namespace_name, key, RevisionKeysOfNamespace(context, namespace_name), ask, quota,
      [&context](const std::string& other) { return WrittenQuotaCharge(context, other); });
  RemoveCut(desired, ask.prestage_nodes, grant.prestage_nodes.size());
  RemoveCut(desired, ask.pinned_nodes, grant.pinned_nodes.size());
  if (quota.Limits()) result.refusals = grant.refusals;
  return result;
}

}  // namespace modelplane::controller
