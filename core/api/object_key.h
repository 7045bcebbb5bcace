// "namespace/name": the one spelling of an object's key, for informer stores and indexes, work
// queue items, the revision a pod names and log fields. Cluster-scoped objects (nodes,
// ModelCaches) are keyed by their name alone.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace modelplane::core::api {

[[nodiscard]] inline std::string ObjectKey(std::string_view namespace_name, std::string_view name) {
  std::string key;
  key.reserve(namespace_name.size() + 1 + name.size());
  if (!namespace_name.empty()) {
    key += namespace_name;
    key += '/';
  }
  key += name;
  return key;
}

}  // namespace modelplane::core::api
