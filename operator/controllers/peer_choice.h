// Which peers a node reads a revision from, chosen by the operator so that no agent reads other
// nodes' status (per-node API cost constant in the fleet's size; docs/architecture.md, "Fleet
// scale"). A pure function of the holders the operator sees in ModelCache statuses.
//
// Order: Ready holders in the node's zone, then staging ones in its zone (the zone's seeder and
// followers that verified a file first serve each file as soon as they have it), then Ready
// holders elsewhere; a zone reads its origin copy through its own seeder, never from another
// zone's staging nodes. Within each class a node ranks holders by a rendezvous hash of the two
// names, so different nodes pick different peers (reads spread over a zone's holders). The
// choice is sticky: a peer listed before stays while it still holds the revision and its class
// is as good as the worst class the list would hold if chosen afresh, so a new holder that
// merely hashes higher displaces no one. A node's list therefore changes when a listed peer
// changes state or goes, when a better class appears, or to fill a free place: at most a few
// times the limit over a rollout, whatever the fleet's size; progress alone never rewrites it.
// At most kMaxRevisionPeers.
// Thread safety: a pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/api/limits.h"
#include "core/api/model_cache.h"

namespace modelplane::controller {

struct PeerHolder {
  std::string node;
  std::string endpoint;
  std::string zone;
  bool ready = false;  // else staging (Pending or Staging)
  // The revision's files (sha256 digests) it holds or stages through another revision; empty:
  // the revision itself, all of them.
  std::vector<std::string> files;
};

// `previous`: the list the node's entry holds now (empty for a new entry).
[[nodiscard]] std::vector<core::api::PeerSource> ChoosePeers(
    std::string_view node, std::string_view zone, const std::vector<PeerHolder>& holders,
    const std::vector<core::api::PeerSource>& previous = {},
    std::size_t limit = core::api::kMaxRevisionPeers);

}  // namespace modelplane::controller
