// Keeps a CacheInventory equal to the cluster: one informer on ModelRevisions (all namespaces)
// and one on ModelCaches, converting each object as it changes. An object that does not parse
// is dropped from the inventory and logged (it cannot be placed against until it is fixed).
//
// Thread safety: Start/Stop/WaitForSync from the owning thread; the inventory is read from
// anywhere while the informers' threads write it.
#pragma once

#include <chrono>
#include <memory>

#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/kube/informer.h"
#include "core/log/logger.h"
#include "scheduler-extender/cache_inventory.h"

namespace modelplane::extender {

class InventorySync {
 public:
  InventorySync(core::KubeClient& client, const core::Watcher& watcher, const core::Clock& clock,
                CacheInventory& inventory, core::Logger logger);
  InventorySync(const InventorySync&) = delete;
  InventorySync& operator=(const InventorySync&) = delete;
  ~InventorySync();  // Stop()

  void Start();
  void Stop();
  // True once both informers hold their first full list; false when `stop` fires first.
  [[nodiscard]] bool WaitForSync(core::CancellationToken& stop);
  [[nodiscard]] bool HasSynced() const;

 private:
  void ApplyRevision(const core::ObjectPtr& object);
  void ApplyCache(const core::ObjectPtr& object);

  CacheInventory& inventory_;
  const core::Logger logger_;
  const core::Clock& clock_;
  std::unique_ptr<core::Informer> revisions_;
  std::unique_ptr<core::Informer> caches_;
};

}  // namespace modelplane::extender
