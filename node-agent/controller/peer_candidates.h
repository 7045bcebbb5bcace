// The peers a staging reads from, as the operator named them in this node's ModelCache entry
// (spec.revisions[].peers; operator/controllers/peer_choice.h chooses them): the agent reads no
// other node's status, so its cost to the API server does not grow with the fleet. Each peer
// holds (Ready) or stages every file of the revision, or only those listed (files it holds
// through another revision); a staging peer serves each file as soon as it verified it.
// The operator's order is kept: this zone's Ready holders, its staging ones, Ready holders
// elsewhere.
// Thread safety: a pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/api/model_cache.h"
#include "core/digest/sha256.h"
#include "node-agent/peer/peer_range_source.h"
#include "node-agent/revision/loaded_revision.h"

namespace modelplane::agent {

struct PeerCandidate {
  std::string node_name;  // the identity its certificate must name
  std::string endpoint;
  bool nearby = true;        // same zone
  PeerHolding holding;       // never "everything": the blobs it holds or stages of the revision
  PeerTicketHolding ticket;  // the entry's ticket, if the operator wrote one
};

// Candidates for `revision` from the peers its spec entry names, each with the entry's ticket
// and the revision's file tree (which proves each blob asked for belongs to it); a peer naming
// no file of the revision, this node's own endpoint, or an unknown state is left out.
[[nodiscard]] std::vector<PeerCandidate> PeerCandidatesFromSpec(
    const std::vector<core::api::PeerSource>& peers, std::string_view ticket,
    const LoadedRevision& revision, std::string_view zone, std::string_view self_endpoint);

}  // namespace modelplane::agent
