#include "operator/controllers/adapter_placement.h"

#include <algorithm>

#include "core/json/json_lookup.h"
#include "operator/controllers/cache_entries.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;

std::string TextAt(const json& object, std::initializer_list<std::string_view> path) {
  const json* found = core::FindMember(object, path);
  return found != nullptr && found->is_string() ? found->get<std::string>() : std::string();
}

}  // namespace

core::IndexFunction RevisionsByBaseDigestIndex() {
  return [](const json& revision) -> std::vector<std::string> {
    std::string digest = TextAt(revision, {"spec", "base", "digest"});
    if (digest.empty()) return {};
    return {std::move(digest)};
  };
}

std::map<std::string, EntryIntent> EntriesBesideBase(
    const core::ObjectStore& revisions, const core::ObjectStore& caches,
    core::ParsedObjects<core::api::ModelCache>& parsed_caches, std::string_view namespace_name,
    std::string_view base_digest) {
  std::map<std::string, EntryIntent> entries;
  for (const core::ObjectPtr& base :
       revisions.ByIndex(kRevisionsByDigest, std::string(base_digest))) {
    const api::RevisionReference reference{
        .namespace_name = TextAt(*base, {"metadata", "namespace"}),
        .name = TextAt(*base, {"metadata", "name"})};
    if (reference.namespace_name != namespace_name) continue;
    if (const json* adapter_base = core::FindMember(*base, {"spec", "base"});
        adapter_base != nullptr) {
      continue;  // an adapter of an adapter is no base
    }
    for (const core::ObjectPtr& cache : caches.ByIndex(kCachesByRevision, RevisionKey(reference))) {
      const auto parsed = parsed_caches.Get(cache);
      if (!parsed || !*parsed) continue;
      const api::ModelCache& node_cache = **parsed;
      for (const api::DesiredRevision& entry : node_cache.spec.revisions) {
        if (entry.revision != reference) continue;
        EntryIntent& intent = entries[node_cache.metadata.name];
        if (intent.reason.empty()) intent.reason = entry.reason;
        if (!entry.pinned) continue;
        // Pinned as long as the longest pin it shares: none when one has no end.
        if (!intent.pinned) {
          intent.pinned_until = entry.pinned_until;
        } else if (!entry.pinned_until || !intent.pinned_until) {
          intent.pinned_until.reset();
        } else {
          intent.pinned_until = std::max(*intent.pinned_until, *entry.pinned_until);
        }
        intent.pinned = true;
        intent.reason = entry.reason;
      }
    }
  }
  return entries;
}

std::vector<std::string> AdapterKeysOf(const core::ObjectStore& revisions,
                                       const std::vector<std::string>& keys) {
  std::vector<std::string> adapters;
  for (const std::string& key : keys) {
    const core::ObjectPtr revision = revisions.Get(key);
    if (!revision) continue;
    const std::string digest = TextAt(*revision, {"status", "digest"});
    if (digest.empty()) continue;
    const std::string namespace_name = TextAt(*revision, {"metadata", "namespace"});
    for (const core::ObjectPtr& adapter : revisions.ByIndex(kRevisionsByBaseDigest, digest)) {
      if (TextAt(*adapter, {"metadata", "namespace"}) == namespace_name) {
        adapters.push_back(core::ObjectStore::KeyOf(*adapter));
      }
    }
  }
  return adapters;
}

}  // namespace modelplane::controller
