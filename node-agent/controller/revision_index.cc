#include "node-agent/controller/revision_index.h"

#include <algorithm>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "core/api/model_revocation.h"
#include "core/api/object_key.h"
#include "core/signing/model_signature_verifier.h"
#include "core/signing/signature_time.h"

namespace modelplane::agent {
namespace {

std::string KeyOf(const nlohmann::json& object) {
  const nlohmann::json& metadata = object.value("metadata", nlohmann::json::object());
  return core::api::ObjectKey(metadata.value("namespace", ""), metadata.value("name", ""));
}

std::string ResourceVersionOf(const nlohmann::json& object) {
  return object.value("metadata", nlohmann::json::object()).value("resourceVersion", "");
}

}  // namespace

void RevisionIndex::Refresh(const std::vector<core::ObjectPtr>& objects,
                            const core::SignaturePolicy* signatures,
                            std::chrono::system_clock::time_point now) {
  std::map<std::string, Entry> entries;
  for (const core::ObjectPtr& object : objects) {
    if (!object || !object->is_object()) continue;
    const std::string key = KeyOf(*object);
    const std::string version = ResourceVersionOf(*object);
    if (auto found = entries_.find(key);
        found != entries_.end() && !version.empty() && found->second.resource_version == version) {
      entries.emplace(key, std::move(found->second));
      continue;
    }
    Entry entry{.resource_version = version};
    auto parsed = core::api::ModelRevisionFromJson(*object);
    auto loaded = parsed ? CheckRevision(std::move(*parsed))
                         : core::Result<LoadedRevision>(std::unexpected(parsed.error()));
    if (!loaded) {
      entry.problem = loaded.error().message();
    } else if (auto signed_by = core::VerifyModelSignatures(
                   signatures, loaded->revision.metadata.namespace_name, loaded->revision.spec,
                   core::SignatureTime(loaded->revision, now));
               !signed_by) {
      entry.problem = signed_by.error().message;
      entry.reason = signed_by.error().reason;
    } else {
      entry.loaded = std::move(*loaded);
    }
    entries.emplace(key, std::move(entry));
  }
  entries_ = std::move(entries);
  by_digest_.clear();
  for (const auto& [key, entry] : entries_) {
    if (entry.loaded) by_digest_[entry.loaded->digest].push_back(key);
  }
}

const RevisionIndex::Entry* RevisionIndex::Find(const std::string& key) const {
  const auto found = entries_.find(key);
  return found == entries_.end() ? nullptr : &found->second;
}

void RevisionIndex::SetHoldings(const std::vector<core::api::Holding>& holdings) {
  holdings_.clear();
  for (const core::api::Holding& holding : holdings) {
    if (auto digest = core::ParseDigest(holding.digest)) holdings_[*digest] = holding;
  }
}

const core::api::Holding* RevisionIndex::HoldingOf(const core::Sha256Bytes& digest) const {
  const auto found = holdings_.find(digest);
  return found == holdings_.end() ? nullptr : &found->second;
}

bool RevisionIndex::Revoked(const core::Sha256Bytes& digest) const {
  if (const core::api::Holding* holding = HoldingOf(digest)) return holding->revoked;
  const auto keys = by_digest_.find(digest);
  if (keys == by_digest_.end()) return false;
  bool revoked = false;
  for (const std::string& key : keys->second) {
    if (!core::api::IsRevoked(entries_.at(key).loaded->revision)) return false;
    revoked = true;
  }
  return revoked;
}

bool RevisionIndex::ForcePurge(const core::Sha256Bytes& digest) const {
  if (const core::api::Holding* holding = HoldingOf(digest)) {
    return holding->revoked && holding->force_purge;
  }
  const auto keys = by_digest_.find(digest);
  if (keys == by_digest_.end()) return false;
  return std::ranges::any_of(keys->second, [&](const std::string& key) {
    return core::api::ForcesPurge(entries_.at(key).loaded->revision);
  });
}

std::vector<std::string> RevisionIndex::OriginSources(const core::Sha256Bytes& digest) const {
  std::set<std::string> names;
  if (const auto keys = by_digest_.find(digest); keys != by_digest_.end()) {
    for (const std::string& key : keys->second) {
      for (const core::api::ModelSource& source : entries_.at(key).loaded->revision.spec.sources) {
        names.insert(source.type + "/" + source.name);
      }
    }
  }
  return {names.begin(), names.end()};
}

const LoadedRevision* RevisionIndex::AnyWithDigest(const core::Sha256Bytes& digest) const {
  const auto keys = by_digest_.find(digest);
  if (keys == by_digest_.end() || keys->second.empty()) return nullptr;
  return &*entries_.at(keys->second.front()).loaded;
}

std::vector<ManifestFile> SpecFiles(const LoadedRevision& revision) {
  std::vector<ManifestFile> files;
  for (const core::api::ModelFile& file : revision.revision.spec.files) {
    auto digest = core::ParseDigest(file.sha256);
    if (!digest) continue;  // CheckRevision validated every digest
    files.push_back(
        {.path = file.path, .size = static_cast<std::uint64_t>(file.size), .sha256 = *digest});
  }
  return files;
}

}  // namespace modelplane::agent
