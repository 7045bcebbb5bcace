#include "scheduler-extender/inventory_sync.h"

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "core/kube/resource_type.h"

namespace modelplane::extender {
namespace {

std::string KeyOf(const core::ObjectPtr& object) {
  return core::ObjectStore::KeyOf(*object);
}

}  // namespace

InventorySync::InventorySync(core::KubeClient& client, const core::Watcher& watcher,
                             const core::Clock& clock, CacheInventory& inventory,
                             core::Logger logger)
    : inventory_(inventory), logger_(std::move(logger)), clock_(clock) {
  revisions_ = std::make_unique<core::Informer>(
      client, watcher, core::InformerOptions{.type = core::resources::ModelRevisions()}, clock);
  caches_ = std::make_unique<core::Informer>(
      client, watcher, core::InformerOptions{.type = core::resources::ModelCaches()}, clock);
  revisions_->AddHandlers(
      {.on_add = [this](const core::ObjectPtr& object) { ApplyRevision(object); },
       .on_update = [this](const core::ObjectPtr&,
                           const core::ObjectPtr& object) { ApplyRevision(object); },
       .on_delete =
           [this](const core::ObjectPtr& object) { inventory_.RemoveRevision(KeyOf(object)); }});
  caches_->AddHandlers(
      {.on_add = [this](const core::ObjectPtr& object) { ApplyCache(object); },
       .on_update = [this](const core::ObjectPtr&,
                           const core::ObjectPtr& object) { ApplyCache(object); },
       .on_delete =
           [this](const core::ObjectPtr& object) { inventory_.RemoveCache(KeyOf(object)); }});
}

InventorySync::~InventorySync() {
  Stop();
}

void InventorySync::Start() {
  revisions_->Start();
  caches_->Start();
}

void InventorySync::Stop() {
  revisions_->Stop();
  caches_->Stop();
}

bool InventorySync::HasSynced() const {
  return revisions_->HasSynced() && caches_->HasSynced();
}

bool InventorySync::WaitForSync(core::CancellationToken& stop) {
  return core::WaitForCacheSync({revisions_.get(), caches_.get()}, stop, clock_);
}

void InventorySync::ApplyRevision(const core::ObjectPtr& object) {
  auto revision = core::api::ModelRevisionFromJson(*object);
  if (!revision) {
    inventory_.RemoveRevision(KeyOf(object));
    logger_.Warn("revision_unreadable",
                 {{"revision", KeyOf(object)}, {"error", revision.error().message()}});
    return;
  }
  RevisionInfo info = MakeRevisionInfo(*revision);
  logger_.Debug("revision_observed",
                {{"revision", info.key}, {"digest", info.digest}, {"bytes", info.bytes}});
  inventory_.UpsertRevision(std::move(info));
}

void InventorySync::ApplyCache(const core::ObjectPtr& object) {
  auto cache = core::api::ModelCacheFromJson(*object);
  if (!cache) {
    inventory_.RemoveCache(KeyOf(object));
    logger_.Warn("model_cache_unreadable",
                 {{"node", KeyOf(object)}, {"error", cache.error().message()}});
    return;
  }
  NodeCacheInfo info = MakeNodeCacheInfo(*cache);
  logger_.Debug("model_cache_observed", {{"node", info.node},
                                         {"capacity_bytes", info.capacity_bytes},
                                         {"revisions", info.entries.size()}});
  inventory_.UpsertCache(std::move(info));
}

}  // namespace modelplane::extender
