// Which other nodes can serve a revision's blobs, read from their ModelCache statuses: a node
// holds every blob of the revisions it reports Ready, and will hold those of the revisions it
// is staging. Peers work per blob, so a node that holds a file through another revision is a
// source for it, and a staging peer in this zone (its seeder, or a follower that got a file
// first) serves each file as soon as it has verified it.
//
// Only peers in this node's zone count as staging peers: a zone reads its origin copy through
// its own seeder, not across zones. Ready holders elsewhere are kept, after this zone's.
// Thread safety: a pure function.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/api/model_cache.h"
#include "core/digest/sha256.h"
#include "node-agent/peer/peer_range_source.h"

namespace modelplane::agent {

struct PeerCandidate {
  std::string node_name;  // whose ModelCache advertised it: the identity its certificate names
  std::string endpoint;
  bool nearby = true;   // same zone
  PeerHolding holding;  // never "everything": the blobs it holds or stages of the revision
};

struct PeerLookup {
  std::string self_name;
  std::string self_endpoint;
  std::string zone;
  // The blobs of the revisions with a digest, or null when this node does not know it.
  std::function<const std::set<core::Sha256Bytes>*(const core::Sha256Bytes& digest)> blobs_of;
};

// Candidates for a revision whose blobs are `wanted`, this zone's first, each sorted by endpoint.
[[nodiscard]] std::vector<PeerCandidate> FindPeerCandidates(
    const std::vector<core::api::ModelCache>& caches, const std::set<core::Sha256Bytes>& wanted,
    const PeerLookup& lookup);

}  // namespace modelplane::agent
