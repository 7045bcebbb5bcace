#include "node-agent/controller/peer_candidates.h"

#include "node-agent/controller/revision_index.h"

namespace modelplane::agent {

std::vector<PeerCandidate> PeerCandidatesFromSpec(const std::vector<core::api::PeerSource>& peers,
                                                  std::string_view ticket,
                                                  const LoadedRevision& revision,
                                                  std::string_view zone,
                                                  std::string_view self_endpoint) {
  std::set<core::Sha256Bytes> blobs;
  for (const ManifestFile& file : SpecFiles(revision)) blobs.insert(file.sha256);
  PeerTicketHolding held_ticket;
  if (!ticket.empty() && !peers.empty()) {
    const std::vector<core::Sha256Bytes> digests(blobs.begin(), blobs.end());
    held_ticket = {
        .ticket = std::string(ticket),
        .files = std::make_shared<const core::FileSetTree>(core::FileSetTree::Of(digests))};
  }
  std::vector<PeerCandidate> result;
  for (const core::api::PeerSource& peer : peers) {
    if (peer.endpoint.empty() || peer.endpoint == self_endpoint) continue;
    const bool ready = peer.state == core::api::kPeerStateReady;
    if (!ready && peer.state != core::api::kPeerStateStaging) continue;
    PeerCandidate candidate{.node_name = peer.node,
                            .endpoint = peer.endpoint,
                            .nearby = peer.zone == zone,
                            .ticket = held_ticket};
    candidate.holding.everything = false;
    std::set<core::Sha256Bytes>& held = ready ? candidate.holding.ready : candidate.holding.staging;
    if (peer.files.empty()) {
      held = blobs;
    } else {
      for (const std::string& file : peer.files) {
        auto blob = core::ParseDigest(file);
        if (blob && blobs.contains(*blob)) held.insert(*blob);
      }
    }
    if (held.empty()) continue;
    result.push_back(std::move(candidate));
  }
  return result;
}

}  // namespace modelplane::agent
