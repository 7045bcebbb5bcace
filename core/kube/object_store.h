// The informer's local cache: objects by key ("namespace/name", or "name" when cluster-scoped)
// with secondary indexes (by namespace, by node name, or any function of the object).
//
// Objects are stored as shared_ptr<const json>: readers get a snapshot they can keep without
// copying, and an update replaces the pointer instead of mutating what readers hold.
// Thread safety: all methods may be called from any thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

namespace modelplane::core {

using ObjectPtr = std::shared_ptr<const nlohmann::json>;

// Index values for one object; an object may appear under several values or none.
using IndexFunction = std::function<std::vector<std::string>(const nlohmann::json&)>;

class ObjectStore {
 public:
  // "namespace/name", or "name" for cluster-scoped objects.
  [[nodiscard]] static std::string KeyOf(const nlohmann::json& object);

  // Indexers must be added before the first object.
  void AddIndexer(const std::string& name, IndexFunction function);

  // Inserts or replaces; returns the previous object, if any.
  ObjectPtr Upsert(ObjectPtr object);
  // Removes by key; returns what was removed, if any.
  ObjectPtr Remove(const std::string& key);
  // Replaces the whole content (after a relist); returns the objects that disappeared.
  std::vector<ObjectPtr> Replace(std::vector<ObjectPtr> objects);

  [[nodiscard]] ObjectPtr Get(const std::string& key) const;
  [[nodiscard]] std::vector<ObjectPtr> List() const;
  [[nodiscard]] std::vector<std::string> Keys() const;
  [[nodiscard]] std::vector<ObjectPtr> ByIndex(const std::string& index,
                                               const std::string& value) const;
  // The values under which an index holds at least one object.
  [[nodiscard]] std::vector<std::string> IndexValues(const std::string& index) const;
  [[nodiscard]] std::size_t Size() const;

 private:
  void IndexLocked(const std::string& key, const nlohmann::json& object);
  void UnindexLocked(const std::string& key, const nlohmann::json& object);

  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, ObjectPtr> objects_;
  std::map<std::string, IndexFunction> indexers_;
  // index name -> index value -> keys
  std::map<std::string, std::unordered_map<std::string, std::unordered_set<std::string>>> indexes_;
};

// Common index functions.
namespace indexers {
IndexFunction ByNamespace();
IndexFunction ByNodeName();  // pods: spec.nodeName
}  // namespace indexers

}  // namespace modelplane::core
