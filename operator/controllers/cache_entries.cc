#include "operator/controllers/cache_entries.h"

#include <algorithm>

#include "core/api/model_revision.h"
#include "core/api/object_key.h"
#include "core/json/json_lookup.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;

const json* FindList(const json& object, const char* section) {
  if (!object.is_object()) return nullptr;
  const auto part = object.find(section);
  if (part == object.end() || !part->is_object()) return nullptr;
  const auto list = part->find("revisions");
  if (list == part->end() || !list->is_array()) return nullptr;
  return &*list;
}

std::string StringAt(const json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto value = object.find(key);
  return value != object.end() && value->is_string() ? value->get<std::string>() : std::string();
}

}  // namespace

std::string RevisionKey(const api::RevisionReference& reference) {
  return core::api::ObjectKey(reference.namespace_name, reference.name);
}

std::vector<std::string> SpecRevisionKeys(const json& cache) {
  std::vector<std::string> keys;
  if (const json* list = FindList(cache, "spec")) {
    for (const json& entry : *list) {
      if (!entry.is_object() || !entry.contains("revision")) continue;
      const json& revision = entry["revision"];
      const std::string ns = StringAt(revision, "namespace");
      const std::string name = StringAt(revision, "name");
      if (!ns.empty() && !name.empty()) keys.push_back(core::api::ObjectKey(ns, name));
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

std::vector<std::string> StatusDigests(const json& cache) {
  std::vector<std::string> digests;
  if (const json* list = FindList(cache, "status")) {
    for (const json& entry : *list) {
      if (std::string digest = StringAt(entry, "digest"); !digest.empty()) {
        digests.push_back(std::move(digest));
      }
    }
  }
  return digests;
}

namespace {

// Entries of spec.revisions grouped by revision key, or of status.revisions by digest.
std::map<std::string, json> GroupEntries(const json& cache, const char* section) {
  std::map<std::string, json> groups;
  const json* list = FindList(cache, section);
  if (list == nullptr) return groups;
  for (const json& entry : *list) {
    std::string key;
    if (std::string_view(section) == "spec") {
      if (!entry.is_object() || !entry.contains("revision")) continue;
      key = core::api::ObjectKey(StringAt(entry["revision"], "namespace"),
                                 StringAt(entry["revision"], "name"));
    } else {
      key = StringAt(entry, "digest");
    }
    if (key.empty()) continue;
    auto [group, inserted] = groups.try_emplace(key, json::array());
    group->second.push_back(entry);
  }
  return groups;
}

std::vector<std::string> ChangedKeys(const std::map<std::string, json>& before,
                                     const std::map<std::string, json>& after) {
  std::vector<std::string> changed;
  for (const auto& [key, entries] : before) {
    const auto now = after.find(key);
    if (now == after.end() || now->second != entries) changed.push_back(key);
  }
  for (const auto& [key, entries] : after) {
    if (!before.contains(key)) changed.push_back(key);
  }
  return changed;
}

}  // namespace

std::vector<std::string> ChangedSpecRevisionKeys(const json& before, const json& after) {
  return ChangedKeys(GroupEntries(before, "spec"), GroupEntries(after, "spec"));
}

std::vector<std::string> ChangedStatusDigests(const json& before, const json& after) {
  return ChangedKeys(GroupEntries(before, "status"), GroupEntries(after, "status"));
}

core::IndexFunction CachesByRevisionIndex() {
  return [](const json& cache) { return SpecRevisionKeys(cache); };
}

core::IndexFunction CachesByHeldDigestIndex() {
  return [](const json& cache) { return StatusDigests(cache); };
}

core::IndexFunction RevisionsByDigestIndex() {
  return [](const json& revision) -> std::vector<std::string> {
    if (!revision.contains("status")) return {};
    std::string digest = StringAt(revision["status"], "digest");
    if (digest.empty()) return {};
    return {std::move(digest)};
  };
}

core::IndexFunction RevisionsByFileIndex() {
  return [](const json& revision) -> std::vector<std::string> {
    std::vector<std::string> files;
    const json* list = core::FindMember(revision, {"spec", "files"});
    if (list == nullptr || !list->is_array()) return files;
    for (const json& file : *list) {
      if (file.is_object()) {
        if (std::string sha = StringAt(file, "sha256"); !sha.empty())
          files.push_back(std::move(sha));
      }
    }
    return files;
  };
}

std::vector<api::DesiredRevision> ReplaceEntry(const std::vector<api::DesiredRevision>& entries,
                                               const api::RevisionReference& revision,
                                               const api::DesiredRevision* desired) {
  std::vector<api::DesiredRevision> out;
  out.reserve(entries.size() + 1);
  bool placed = false;
  for (const api::DesiredRevision& entry : entries) {
    if (entry.revision != revision) {
      out.push_back(entry);
    } else if (desired != nullptr && !placed) {
      out.push_back(*desired);
      placed = true;
    }
  }
  if (desired != nullptr && !placed) out.push_back(*desired);
  return out;
}

core::Result<json> ApplyCacheEntries(core::KubeClient& client, const json& cache,
                                     const std::vector<api::DesiredRevision>& entries) {
  const json& metadata = cache.at("metadata");
  const std::string name = metadata.value("name", "");
  const json patch = {
      {"apiVersion", api::kApiVersion},
      {"kind", api::kModelCacheKind},
      {"metadata", {{"name", name}, {"resourceVersion", metadata.value("resourceVersion", "")}}},
      {"spec", api::ToJson(api::ModelCacheSpec{.revisions = entries})}};
  return client.Patch(core::resources::ModelCaches(), "", name, core::PatchType::kApply, patch,
                      {.field_manager = std::string(kFieldManager), .force = true});
}

core::Result<bool> UpdateCacheEntries(core::KubeClient& client, core::LatestObjects& latest,
                                      const core::ObjectStore& caches, const std::string& name,
                                      const EntriesChange& change) {
  const auto turn = latest.LockWriters(name);
  // Read after the turn is ours: the writer before us may have just written this cache.
  core::ObjectPtr current = latest.Newest(caches.Get(name));
  if (current == nullptr) return false;
  for (int attempt = 1;; ++attempt) {
    auto parsed = api::ModelCacheFromJson(*current);
    if (!parsed) return std::unexpected(parsed.error());
    const std::vector<api::DesiredRevision> entries = change(parsed->spec.revisions);
    if (entries == parsed->spec.revisions) return false;
    auto applied = ApplyCacheEntries(client, *current, entries);
    if (applied) {
      latest.Remember(*applied);
      return true;
    }
    if (applied.error().code() != core::ErrorCode::kConflict || attempt >= kCacheWriteAttempts) {
      return std::unexpected(applied.error());
    }
    auto fresh = client.Get(core::resources::ModelCaches(), "", name);
    if (!fresh) return std::unexpected(fresh.error());
    latest.Remember(*fresh);
    current = std::make_shared<const json>(std::move(*fresh));
  }
}

}  // namespace modelplane::controller
