// How a node's cache entry for a digest reads for one revision of that digest.
//
// Two namespaces' revisions with the same files share a digest, and so one entry in each node's
// cache: without a check, a tenant who copied another's file list could name a source it cannot
// read and be served the other tenant's bytes by every node that holds them. A node therefore
// reports, per revision of the digest it is asked to hold, whether the revision's own sources
// serve those bytes (SourceProof: its bytes came from them, or random ranges read from them
// matched). The revision counts as Ready on nodes that hold the digest only once some node
// proved that; until then they read as Staging (the proof is running) or Failed (it failed, with
// the node's reason). The operator and the kubectl plugin read the fleet this way alike.
// docs/security.md, "Bytes shared across namespaces".
// Thread safety: pure functions.
#pragma once

#include <map>
#include <string>

#include "core/api/model_cache.h"

namespace modelplane::core::api {

struct SourceProofs {
  bool proven = false;
  // While none proved it: the nodes whose proof failed, with what they said.
  std::map<std::string, SourceProof> failed;
};

// Folds node `node`'s status entry for the digest into `proofs` (call it for every holder; a
// proof found anywhere clears the failures).
void AddSourceProofs(const std::string& node, const CachedRevision& cached,
                     const RevisionReference& revision, SourceProofs& proofs);

// `cached` (node `node`'s entry for the digest) as it reads for the revision: unchanged once the
// revision is proven or while the entry is not Ready; else Failed with the node's reason when its
// proof failed, Staging while no node has proved it.
[[nodiscard]] CachedRevision EntryForRevision(const CachedRevision& cached, const std::string& node,
                                              const SourceProofs& proofs);

}  // namespace modelplane::core::api
