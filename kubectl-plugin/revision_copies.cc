#include "kubectl-plugin/revision_copies.h"

#include <algorithm>

#include "core/api/source_proofs.h"
#include "core/json/json_lookup.h"

namespace modelplane::cli {

namespace api = core::api;

std::vector<std::string> RevisionCopies::NodesInState(std::string_view state) const {
  std::vector<std::string> nodes;
  for (const RevisionCopy& copy : copies) {
    if (CopyState(copy) == state) nodes.push_back(copy.node);
  }
  return nodes;
}

RevisionCopies FindRevisionCopies(const api::RevisionReference& revision, const std::string& digest,
                                  const std::vector<nlohmann::json>& caches) {
  RevisionCopies result;
  std::vector<api::ModelCache> parsed;
  for (const nlohmann::json& item : caches) {
    auto cache = api::ModelCacheFromJson(item);
    if (!cache) {
      const std::string name = core::StringMember(item, {"metadata", "name"});
      result.unreadable.push_back((name.empty() ? "?" : name) + ": " + cache.error().message());
      continue;
    }
    parsed.push_back(std::move(*cache));
  }
  for (const api::ModelCache& cache : parsed) {
    RevisionCopy copy{.node = cache.metadata.name};
    for (const api::DesiredRevision& entry : cache.spec.revisions) {
      if (entry.revision == revision) {
        copy.requested = entry;
        break;
      }
    }
    // The spec entry's digest is what the agent stages under, so it finds the copy even when
    // the revision's own status has no digest yet.
    const std::string& key = !digest.empty()  ? digest
                             : copy.requested ? copy.requested->digest
                                              : digest;
    if (!key.empty() && cache.status) {
      for (const api::CachedRevision& entry : cache.status->revisions) {
        if (entry.digest == key) {
          copy.cached = entry;
          break;
        }
      }
    }
    if (copy.requested || copy.cached) result.copies.push_back(std::move(copy));
  }
  // A node that holds the digest for another revision holds it for this one only once this
  // revision's own sources were shown to serve the bytes, as the operator reads it.
  api::SourceProofs proofs;
  for (const RevisionCopy& copy : result.copies) {
    if (copy.cached) api::AddSourceProofs(copy.node, *copy.cached, revision, proofs);
  }
  for (RevisionCopy& copy : result.copies) {
    if (copy.cached) copy.cached = api::EntryForRevision(*copy.cached, copy.node, proofs);
  }
  std::sort(result.copies.begin(), result.copies.end(),
            [](const RevisionCopy& a, const RevisionCopy& b) { return a.node < b.node; });
  return result;
}

std::string CopyState(const RevisionCopy& copy) {
  if (copy.cached && !copy.cached->state.empty()) return copy.cached->state;
  return "Requested";
}

}  // namespace modelplane::cli
