// What the operator means a node's ModelCache entry for one revision to say, planned per node
// by the ModelRevision controller and its steps (placement, rollouts, gates, quotas, peers).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/api/model_cache.h"
#include "core/api/timestamp.h"

namespace modelplane::controller {

struct EntryIntent {
  std::string reason;  // api::kReason*
  bool pinned = false;
  std::optional<core::api::Timestamp> pinned_until;
  std::vector<core::api::PeerSource> peers;  // peer_choice.h; empty where the node holds it
  std::string peer_ticket;                   // with peers, when the operator signs tickets
};

}  // namespace modelplane::controller
