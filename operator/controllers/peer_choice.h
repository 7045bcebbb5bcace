// Which peers a node reads a revision from, chosen by the operator so that no agent reads other
// nodes' status (per-node API cost constant in the fleet's size; docs/architecture.md, "Fleet
// scale"). A pure function of the holders the operator sees in ModelCache statuses.
//
// Order: Ready holders in the node's zone, then staging ones in its zone (the zone's seeder and
// followers that verified a file first serve each file as soon as they have it), then Ready
// holders elsewhere; a zone reads its origin copy through its own seeder, never from another
// zone's staging nodes. Within each class a node ranks holders by a rendezvous hash of the two
// names, so different nodes pick different peers (reads spread over a zone's holders). The
// choice is sticky: a peer listed before stays while it still holds or stages the revision in
// the node's zone, or, for a Ready peer elsewhere, while the zone has too few holders to fill
// the list; a new holder that merely hashes higher, or became Ready first, displaces no one.
// A node's list therefore changes when a listed peer changes state or goes, when the zone's own
// holders appear, or to fill a free place: at most a few times the limit over a rollout,
// whatever the fleet's size; progress alone never rewrites it.
// At most kMaxRevisionPeers.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
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

// The holders of one revision, indexed once per pass: each node's list is then chosen from the
// classes it can draw from, and a list whose peers all still qualify is kept without ranking
// the zone again. Choosing for every node of a zone costs O(nodes x limit) on a pass where lists
// hold, O(nodes x zone) only when they must be filled afresh (the rollout's first pass, or when
// a zone's Ready holders first outnumber the limit), where ranking every holder for every node
// cost O(nodes x holders x log holders) on every pass: 3 s of operator CPU per pass at 3,000
// nodes in one zone (bench/rollout-sim, docs/scale.md).
// Thread safety: const methods may be called from any thread; `holders` must outlive it.
class PeerChoice {
 public:
  explicit PeerChoice(const std::vector<PeerHolder>& holders);

  // `previous`: the list the node's entry holds now (empty for a new entry).
  [[nodiscard]] std::vector<core::api::PeerSource> Choose(
      std::string_view node, std::string_view zone,
      const std::vector<core::api::PeerSource>& previous = {},
      std::size_t limit = core::api::kMaxRevisionPeers) const;

 private:
  struct NodeEntries {  // a holder node's best entries: whole before partial
    const PeerHolder* ready = nullptr;
    const PeerHolder* staging = nullptr;
  };
  struct ZoneHolders {
    std::vector<const PeerHolder*> ready;    // its nodes' best Ready entries
    std::vector<const PeerHolder*> staging;  // nodes with no Ready entry: their best staging one
  };
  struct Ranked;

  // The entry a reader in `zone` would list for `holder_node`, with its class; null when none.
  [[nodiscard]] std::pair<const PeerHolder*, int> EntryFor(std::string_view holder_node,
                                                           std::string_view zone) const;

  std::map<std::string, NodeEntries, std::less<>> nodes_;
  std::map<std::string, ZoneHolders, std::less<>> zones_;
  std::size_t ready_nodes_ = 0;
};

// One node's choice from `holders` (PeerChoice(holders).Choose(...)).
[[nodiscard]] std::vector<core::api::PeerSource> ChoosePeers(
    std::string_view node, std::string_view zone, const std::vector<PeerHolder>& holders,
    const std::vector<core::api::PeerSource>& previous = {},
    std::size_t limit = core::api::kMaxRevisionPeers);

}  // namespace modelplane::controller
