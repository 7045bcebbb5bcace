#include "node-agent/controller/retention_facts.h"

#include <algorithm>

#include "core/api/object_key.h"

namespace modelplane::agent {

std::vector<RevisionFacts> CollectRetentionFacts(const RetentionInputs& inputs) {
  const RevisionIndex& index = inputs.index;
  std::map<core::Sha256Bytes, std::set<std::string>> users;
  for (const VolumeLease& lease : inputs.leases) {
    users[lease.revision_digest].insert(lease.pod_uid.empty() ? lease.target_path : lease.pod_uid);
  }
  for (const auto& [key, uids] : inputs.pod_users) {
    const RevisionIndex::Entry* indexed = index.Find(key);
    if (indexed == nullptr || !indexed->loaded) continue;
    users[indexed->loaded->digest].insert(uids.begin(), uids.end());
  }
  std::map<core::Sha256Bytes, RevisionFacts> facts;
  auto facts_for = [&](const core::Sha256Bytes& digest) -> RevisionFacts& {
    auto [found, inserted] = facts.try_emplace(digest);
    RevisionFacts& item = found->second;
    if (inserted) {
      item.digest = digest;
      if (const LoadedRevision* loaded = index.AnyWithDigest(digest)) {
        item.name = core::api::ObjectKey(loaded->revision.metadata.namespace_name,
                                         loaded->revision.metadata.name);
        item.files = SpecFiles(*loaded);
      }
      item.origin_sources = index.OriginSources(digest);
      item.revoked = index.Revoked(digest);
      item.force_purge = index.ForcePurge(digest);
      if (auto user = users.find(digest); user != users.end()) {
        item.users = user->second;
        item.protection.Add(Protection::kInUse);
      }
      if (const core::api::Holding* holding = index.HoldingOf(digest)) {
        item.peer_in_zone = holding->peer_in_zone;
        item.peer_elsewhere = holding->peer_elsewhere;
      }
      if (auto listed = inputs.wanted.find(digest); listed != inputs.wanted.end()) {
        item.protection.Add(Protection::kWanted);
        if (listed->second) item.protection.Add(Protection::kPinned);
      }
      if (inputs.stager != nullptr) {
        auto staged = inputs.stager->State(digest);
        if (staged &&
            (staged->phase == StagingPhase::kQueued || staged->phase == StagingPhase::kStaging)) {
          item.protection.Add(Protection::kReserved);
        }
      }
    }
    return item;
  };
  for (const RevisionManifest& manifest : inputs.store.ListRevisions()) {
    RevisionFacts& item = facts_for(manifest.revision_digest);
    item.stored = true;
    item.files = manifest.files;  // what the store holds is what eviction frees
    if (item.name.empty()) item.name = manifest.name;
    item.published = core::Clock::WallTime(std::chrono::seconds(manifest.published_unix_seconds));
  }
  for (const auto& [digest, pinned] : inputs.wanted) (void)facts_for(digest);
  for (const auto& [digest, keys] : index.by_digest()) {
    if (!index.Revoked(digest)) continue;
    const LoadedRevision* loaded = index.AnyWithDigest(digest);
    const bool held = std::ranges::any_of(loaded->revision.spec.files, [&](const auto& file) {
      auto blob = core::ParseDigest(file.sha256);
      return blob && inputs.store.HasBlob(*blob);
    });
    if (held) (void)facts_for(digest);
  }
  std::vector<RevisionFacts> list;
  list.reserve(facts.size());
  for (auto& [digest, item] : facts) list.push_back(std::move(item));
  return list;
}

}  // namespace modelplane::agent
