#include "operator/controllers/model_cache_controller.h"

#include "core/api/json_lookup.h"
#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "operator/controllers/cache_entries.h"

namespace modelplane::controller {

using nlohmann::json;

core::Result<core::ReconcileResult> ModelCacheController::Reconcile(const std::string& node_name) {
  // A Node being deleted is gone for its cache. Adopting the cache then would name an owner that
  // is about to vanish (after `kubectl delete node --cascade=orphan` the garbage collector has
  // just let go of it) and leave the clean-up to the collector's race with this pass; the
  // operator deletes it itself instead (e2e/scenario.sh checks that it does, in the audit log).
  core::ObjectPtr node = context_.nodes.store().Get(node_name);
  if (node && !core::api::StringMember(*node, {"metadata", "deletionTimestamp"}).empty()) {
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

}  // namespace modelplane::controller
