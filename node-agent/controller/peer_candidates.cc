#include "node-agent/controller/peer_candidates.h"

#include <algorithm>

namespace modelplane::agent {

std::vector<PeerCandidate> FindPeerCandidates(const std::vector<core::api::ModelCache>& caches,
                                              const std::set<core::Sha256Bytes>& wanted,
                                              const PeerLookup& lookup) {
  std::vector<PeerCandidate> result;
  for (const core::api::ModelCache& cache : caches) {
    if (cache.metadata.name == lookup.self_name || !cache.status) continue;
    const core::api::ModelCacheStatus& status = *cache.status;
    if (status.peer_endpoint.empty() || status.peer_endpoint == lookup.self_endpoint) continue;
    PeerCandidate candidate{.node_name = cache.metadata.name,
                            .endpoint = status.peer_endpoint,
                            .nearby = status.zone == lookup.zone};
    candidate.holding.everything = false;
    for (const core::api::CachedRevision& held : status.revisions) {
      const bool ready = held.state == core::api::kCacheStateReady;
      const bool staging = held.state == core::api::kCacheStateStaging ||
                           held.state == core::api::kCacheStatePending;
      if (!ready && !(staging && candidate.nearby)) continue;
      auto digest = core::ParseDigest(held.digest);
      if (!digest) continue;
      const std::set<core::Sha256Bytes>* blobs = lookup.blobs_of(*digest);
      if (blobs == nullptr) continue;
      for (const core::Sha256Bytes& blob : *blobs) {
        if (!wanted.contains(blob)) continue;
        (ready ? candidate.holding.ready : candidate.holding.staging).insert(blob);
      }
    }
    for (const core::Sha256Bytes& blob : candidate.holding.ready) {
      candidate.holding.staging.erase(blob);
    }
    if (candidate.holding.ready.empty() && candidate.holding.staging.empty()) continue;
    result.push_back(std::move(candidate));
  }
  std::sort(result.begin(), result.end(), [](const PeerCandidate& a, const PeerCandidate& b) {
    if (a.nearby != b.nearby) return a.nearby;
    return a.endpoint < b.endpoint;
  });
  return result;
}

}  // namespace modelplane::agent
