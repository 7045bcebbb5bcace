#include "core/kube/latest_objects.h"

#include "core/kube/resource_version.h"

namespace modelplane::core {
namespace {

std::string VersionOf(const nlohmann::json& object) {
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return {};
  return metadata->value("resourceVersion", "");
}

// Whether `candidate` is a later version than `kept` (false when the two do not compare).
bool Later(const nlohmann::json& candidate, const nlohmann::json& kept) {
  const auto order = CompareResourceVersions(VersionOf(candidate), VersionOf(kept));
  return order && *order == std::strong_ordering::greater;
}

}  // namespace

ObjectPtr LatestObjects::Newest(const ObjectPtr& informer_copy) {
  if (informer_copy == nullptr) return nullptr;
  const std::lock_guard lock(mutex_);
  const auto slot = slots_.find(ObjectStore::KeyOf(*informer_copy));
  if (slot == slots_.end() || slot->second->written == nullptr) return informer_copy;
  if (Later(*slot->second->written, *informer_copy)) return slot->second->written;
  slot->second->written = nullptr;  // the informer has it, or something later
  return informer_copy;
}

void LatestObjects::Remember(const nlohmann::json& object) {
  if (!CompareResourceVersions(VersionOf(object), VersionOf(object))) return;
  auto copy = std::make_shared<const nlohmann::json>(object);
  const std::string key = ObjectStore::KeyOf(object);
  const std::lock_guard lock(mutex_);
  Slot& slot = *SlotLocked(key);
  if (slot.written == nullptr || Later(*copy, *slot.written)) slot.written = std::move(copy);
}

void LatestObjects::Observe(const nlohmann::json& informer_copy) {
  const std::lock_guard lock(mutex_);
  const auto slot = slots_.find(ObjectStore::KeyOf(informer_copy));
  if (slot == slots_.end() || slot->second->written == nullptr) return;
  if (!Later(*slot->second->written, informer_copy)) slot->second->written = nullptr;
}

void LatestObjects::Forget(const std::string& key) {
  const std::lock_guard lock(mutex_);
  slots_.erase(key);  // a writer holding its turn keeps the slot alive until it is done
}

LatestObjects::WriterTurn LatestObjects::LockWriters(const std::string& key) {
  std::shared_ptr<Slot> slot;
  {
    const std::lock_guard lock(mutex_);
    slot = SlotLocked(key);
  }
  return WriterTurn(std::move(slot));  // waits for the turn without holding mutex_
}

const std::shared_ptr<LatestObjects::Slot>& LatestObjects::SlotLocked(const std::string& key) {
  auto& slot = slots_[key];
  if (slot == nullptr) slot = std::make_shared<Slot>();
  return slot;
}

std::size_t LatestObjects::RememberedCount() const {
  const std::lock_guard lock(mutex_);
  std::size_t count = 0;
  for (const auto& [key, slot] : slots_) count += slot->written != nullptr ? 1 : 0;
  return count;
}

}  // namespace modelplane::core
