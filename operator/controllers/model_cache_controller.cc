#include "operator/controllers/model_cache_controller.h"

#include <algorithm>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "core/api/model_revocation.h"
#include "core/json/json_lookup.h"
#include "operator/controllers/cache_entries.h"
#include "operator/controllers/held_copies.h"
#include "operator/controllers/holdings.h"

namespace modelplane::controller {

using nlohmann::json;

core::Result<core::ReconcileResult> ModelCacheController::Reconcile(const std::string& node_name) {
  // A Node being deleted is gone for its cache. Adopting the cache then would name an owner that
  // is about to vanish (after `kubectl delete node --cascade=orphan` the garbage collector has
  // just let go of it) and leave the clean-up to the collector's race with this pass; the
  // operator deletes it itself instead (e2e/scenario.sh checks that it does, in the audit log).
  core::ObjectPtr node = context_.nodes.store().Get(node_name);
  if (node && !core::StringMember(*node, {"metadata", "deletionTimestamp"}).empty()) {
    node = nullptr;
  }
  const core::ObjectPtr cache = context_.caches.store().Get(node_name);
  core::Status done = core::Ok();
  if (node && !cache) {
    done = CreateCache(*node);
  } else if (!node && cache) {
    done = DeleteCache(*cache);
  } else if (node && cache) {
    done = AdoptCache(*node, *cache);
    if (done) done = PruneEntries(*cache);
    if (done) done = WriteHoldings(cache);
  }
  if (!done) return std::unexpected(done.error());
  return core::ReconcileResult::Done();
}

namespace {

// What makes a ModelCache the operator's, owned by its Node: the garbage collector removes it
// with the Node even while no operator runs.
json OwnedMetadata(const json& node) {
  const json& metadata = node.at("metadata");
  const std::string name = metadata.value("name", "");
  return {{"name", name},
          {"labels", {{"app.kubernetes.io/managed-by", kFieldManager}}},
          {"ownerReferences", json::array({{{"apiVersion", "v1"},
                                            {"kind", "Node"},
                                            {"name", name},
                                            {"uid", metadata.value("uid", "")}}})}};
}

bool OwnedBy(const json& cache, const json& node) {
  const std::string uid = node.at("metadata").value("uid", "");
  const json& metadata = cache.at("metadata");
  if (!metadata.contains("ownerReferences")) return false;
  for (const json& owner : metadata["ownerReferences"]) {
    if (owner.value("kind", "") == "Node" && owner.value("uid", "") == uid) return true;
  }
  return false;
}

}  // namespace

core::Status ModelCacheController::CreateCache(const json& node) {
  const std::string name = node.at("metadata").value("name", "");
  const json cache = {{"apiVersion", api::kApiVersion},
                      {"kind", api::kModelCacheKind},
                      {"metadata", OwnedMetadata(node)},
                      {"spec", {{"revisions", json::array()}}}};
  auto created = context_.client.Create(core::resources::ModelCaches(), "", cache);
  if (!created && created.error().code() != core::ErrorCode::kAlreadyExists) {
    return std::unexpected(created.error());
  }
  if (created) context_.logger.Info("model_cache_created", {{"node", name}});
  return core::Ok();
}

core::Status ModelCacheController::AdoptCache(const json& node, const json& cache) {
  // An agent that starts before the operator makes its own cache, which it cannot give an
  // owner (it has no right to read Nodes' uids); the operator adopts it once.
  if (OwnedBy(cache, node)) return core::Ok();
  json metadata = OwnedMetadata(node);
  metadata.erase("name");
  auto patched = context_.client.Patch(core::resources::ModelCaches(), "",
                                       node.at("metadata").value("name", ""),
                                       core::PatchType::kMerge, {{"metadata", metadata}});
  if (!patched && patched.error().code() != core::ErrorCode::kNotFound) {
    return std::unexpected(patched.error());
  }
  if (patched) {
    context_.logger.Info("model_cache_adopted", {{"node", node.at("metadata").value("name", "")}});
  }
  return core::Ok();
}

core::Status ModelCacheController::DeleteCache(const json& cache) {
  const json& metadata = cache.at("metadata");
  const std::string name = metadata.value("name", "");
  // The uid precondition keeps a cache made for a new Node of the same name from going.
  auto deleted = context_.client.Delete(core::resources::ModelCaches(), "", name,
                                        {.precondition_uid = metadata.value("uid", "")});
  if (!deleted && deleted.error().code() != core::ErrorCode::kNotFound) {
    return std::unexpected(deleted.error());
  }
  if (deleted) context_.logger.Info("model_cache_deleted", {{"node", name}});
  return core::Ok();
}

core::Status ModelCacheController::PruneEntries(const json& cache_object) {
  const std::string name = cache_object.at("metadata").value("name", "");
  std::vector<std::string> pruned;
  auto written = UpdateCacheEntries(
      context_.client, context_.latest_caches, context_.caches.store(), name,
      [&](const std::vector<api::DesiredRevision>& entries) {
        pruned.clear();
        std::vector<api::DesiredRevision> kept;
        for (const api::DesiredRevision& entry : entries) {
          const bool in_scope = context_.namespace_scope.empty() ||
                                entry.revision.namespace_name == context_.namespace_scope;
          // The revision informer has synced before any reconcile, and an entry is only ever
          // written after its revision was seen there, so absence means deleted.
          if (in_scope && !context_.revisions.store().Get(RevisionKey(entry.revision))) {
            pruned.push_back(RevisionKey(entry.revision));
          } else {
            kept.push_back(entry);
          }
        }
        return kept;
      });
  if (!written) return std::unexpected(written.error());
  for (const std::string& revision : pruned) {
    if (*written)
      context_.logger.Info("cache_entry_pruned", {{"cache", name}, {"revision", revision}});
  }
  return core::Ok();
}

namespace {

// What this operator knows of a digest: the nodes that hold it Ready, and whether the revisions
// with it (those in its namespace scope) are revoked.
DigestFacts FactsOf(const ControllerContext& context, const std::string& digest) {
  DigestFacts facts;
  ForEachHeldEntry(
      context.caches.store(), context.parsed_caches, digest,
      [&](const api::ModelCache& cache, const api::CachedRevision& cached) {
        if (cached.state == api::kCacheStateReady) {
          facts.ready.push_back({.node = cache.metadata.name, .zone = cache.status->zone});
        }
      });
  bool any = false;
  bool all_revoked = true;
  for (const core::ObjectPtr& object :
       context.revisions.store().ByIndex(kRevisionsByDigest, digest)) {
    auto revision = api::ModelRevisionFromJson(*object);
    if (!revision) continue;
    any = true;
    if (!api::IsRevoked(*revision)) {
      all_revoked = false;
    } else if (api::ForcesPurge(*revision)) {
      facts.force_purge = true;
    }
  }
  // Another namespace's identical, unrevoked revision keeps the bytes serving that namespace.
  facts.revoked = any && all_revoked;
  if (!facts.revoked) facts.force_purge = false;
  return facts;
}

}  // namespace

core::Status ModelCacheController::WriteHoldings(const core::ObjectPtr& cache_object) {
  const auto parsed = context_.parsed_caches.Get(cache_object);
  if (!*parsed) return core::Ok();  // an unreadable cache gets nothing; the agent repairs status
  const api::ModelCache& cache = **parsed;
  std::vector<std::string> held;
  std::string zone;
  if (cache.status) {
    zone = cache.status->zone;
    for (const api::CachedRevision& cached : cache.status->revisions) {
      if (cached.state == api::kCacheStateFailed) continue;
      // A namespace-scoped operator speaks only for digests of its own revisions.
      if (!context_.namespace_scope.empty() &&
          context_.revisions.store().ByIndex(kRevisionsByDigest, cached.digest).empty()) {
        continue;
      }
      held.push_back(cached.digest);
    }
  }
  std::ranges::sort(held);
  const std::vector<api::Holding> holdings =
      PlanHoldings(cache.metadata.name, zone, held,
                   [this](const std::string& digest) { return FactsOf(context_, digest); });
  const std::int32_t interval = ProgressIntervalSeconds(context_.caches.store().Size());
  // Several namespace-scoped operators share the list (a map keyed by digest): each compares
  // only the entries it speaks for.
  std::vector<api::Holding> current;
  for (const api::Holding& holding : cache.spec.holdings) {
    if (std::ranges::binary_search(held, holding.digest)) current.push_back(holding);
  }
  if (holdings == current && cache.spec.progress_interval_seconds == interval) {
    return core::Ok();
  }
  const json patch = {
      {"apiVersion", api::kApiVersion},
      {"kind", api::kModelCacheKind},
      {"metadata", {{"name", cache.metadata.name}}},
      {"spec",
       {{"holdings", api::HoldingsToJson(holdings)}, {"progressIntervalSeconds", interval}}}};
  auto applied = context_.client.Patch(
      core::resources::ModelCaches(), "", cache.metadata.name, core::PatchType::kApply, patch,
      {.field_manager = context_.namespace_scope.empty()
                            ? std::string(kHoldingsFieldManager)
                            : std::string(kHoldingsFieldManager) + "-" + context_.namespace_scope,
       .force = true});
  if (!applied && applied.error().code() != core::ErrorCode::kNotFound) {
    return std::unexpected(applied.error());
  }
  return core::Ok();
}

}  // namespace modelplane::controller
