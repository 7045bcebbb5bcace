#include "core/kube/object_store.h"

#include <mutex>

#include "core/api/object_key.h"

namespace modelplane::core {

using nlohmann::json;

namespace {
// A field of metadata as a string, or "" when absent or not a string (never a copy of the tree).
std::string MetadataString(const json& object, const char* key) {
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return "";
  auto value = metadata->find(key);
  return value != metadata->end() && value->is_string() ? value->get<std::string>() : "";
}
}  // namespace

std::string ObjectStore::KeyOf(const json& object) {
  const std::string name = MetadataString(object, "name");
  const std::string ns = MetadataString(object, "namespace");
  return api::ObjectKey(ns, name);
}

void ObjectStore::AddIndexer(const std::string& name, IndexFunction function) {
  std::unique_lock lock(mutex_);
  indexers_[name] = std::move(function);
  auto& index = indexes_[name];
  index.clear();
  for (const auto& [key, object] : objects_) {
    for (const auto& value : indexers_[name](*object)) index[value].insert(key);
  }
}

void ObjectStore::IndexLocked(const std::string& key, const json& object) {
  for (const auto& [name, function] : indexers_) {
    for (const auto& value : function(object)) indexes_[name][value].insert(key);
  }
}

void ObjectStore::UnindexLocked(const std::string& key, const json& object) {
  for (const auto& [name, function] : indexers_) {
    auto& index = indexes_[name];
    for (const auto& value : function(object)) {
      auto bucket = index.find(value);
      if (bucket == index.end()) continue;
      bucket->second.erase(key);
      if (bucket->second.empty()) index.erase(bucket);
    }
  }
}

ObjectPtr ObjectStore::Upsert(ObjectPtr object) {
  const std::string key = KeyOf(*object);
  std::unique_lock lock(mutex_);
  ObjectPtr previous;
  if (auto found = objects_.find(key); found != objects_.end()) {
    previous = found->second;
    UnindexLocked(key, *previous);
  }
  IndexLocked(key, *object);
  objects_[key] = std::move(object);
  return previous;
}

ObjectPtr ObjectStore::Remove(const std::string& key) {
  std::unique_lock lock(mutex_);
  auto found = objects_.find(key);
  if (found == objects_.end()) return nullptr;
  ObjectPtr previous = std::move(found->second);
  objects_.erase(found);
  UnindexLocked(key, *previous);
  return previous;
}

std::vector<ObjectPtr> ObjectStore::Replace(std::vector<ObjectPtr> objects) {
  std::unordered_map<std::string, ObjectPtr> fresh;
  fresh.reserve(objects.size());
  for (auto& object : objects) fresh[KeyOf(*object)] = std::move(object);
  std::unique_lock lock(mutex_);
  std::vector<ObjectPtr> gone;
  for (auto& [key, object] : objects_) {
    if (!fresh.contains(key)) gone.push_back(object);
  }
  objects_ = std::move(fresh);
  for (auto& [name, index] : indexes_) index.clear();
  for (const auto& [key, object] : objects_) IndexLocked(key, *object);
  return gone;
}

ObjectPtr ObjectStore::Get(const std::string& key) const {
  std::shared_lock lock(mutex_);
  auto found = objects_.find(key);
  return found == objects_.end() ? nullptr : found->second;
}

std::vector<ObjectPtr> ObjectStore::List() const {
  std::shared_lock lock(mutex_);
  std::vector<ObjectPtr> all;
  all.reserve(objects_.size());
  for (const auto& [key, object] : objects_) all.push_back(object);
  return all;
}

std::vector<std::string> ObjectStore::Keys() const {
  std::shared_lock lock(mutex_);
  std::vector<std::string> keys;
  keys.reserve(objects_.size());
  for (const auto& [key, object] : objects_) keys.push_back(key);
  return keys;
}

std::vector<ObjectPtr> ObjectStore::ByIndex(const std::string& index,
                                            const std::string& value) const {
  std::shared_lock lock(mutex_);
  std::vector<ObjectPtr> matches;
  auto found_index = indexes_.find(index);
  if (found_index == indexes_.end()) return matches;
  auto bucket = found_index->second.find(value);
  if (bucket == found_index->second.end()) return matches;
  for (const auto& key : bucket->second) matches.push_back(objects_.at(key));
  return matches;
}

std::vector<std::string> ObjectStore::IndexValues(const std::string& index) const {
  std::shared_lock lock(mutex_);
  std::vector<std::string> values;
  auto found_index = indexes_.find(index);
  if (found_index == indexes_.end()) return values;
  for (const auto& [value, keys] : found_index->second) {
    if (!keys.empty()) values.push_back(value);
  }
  return values;
}

std::size_t ObjectStore::Size() const {
  std::shared_lock lock(mutex_);
  return objects_.size();
}

namespace indexers {
IndexFunction ByNamespace() {
  return [](const json& object) -> std::vector<std::string> {
    return {MetadataString(object, "namespace")};
  };
}
IndexFunction ByNodeName() {
  return [](const json& object) -> std::vector<std::string> {
    auto spec = object.find("spec");
    if (spec == object.end() || !spec->is_object()) return {};
    auto node = spec->find("nodeName");
    if (node == spec->end() || !node->is_string() || node->get_ref<const std::string&>().empty()) {
      return {};
    }
    return {node->get<std::string>()};
  };
}
}  // namespace indexers

}  // namespace modelplane::core
