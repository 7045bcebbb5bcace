// Where one ModelRevision is across the fleet, joined from the ModelCache objects: per node,
// the spec entry that asks for it (why, pinned) and the status entry the node agent reports for
// its digest (state, bytes, tier, stage times), as it reads for this revision
// (core/api/source_proofs.h). `status` and `why` both read the fleet this way.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/model_cache.h"
#include "core/api/timestamp.h"

namespace modelplane::cli {

// Cluster-scoped objects as listed (ModelCaches, SourceBudgets), or why they could not be (a
// tenant may not be allowed to list them).
struct ObjectListing {
  std::vector<nlohmann::json> items;
  std::optional<std::string> unavailable;  // set: listing failed, with the reason
};
using CacheListing = ObjectListing;

struct RevisionCopy {
  std::string node;
  std::optional<core::api::DesiredRevision> requested;  // the spec entry naming the revision
  std::optional<core::api::CachedRevision> cached;      // the status entry for its digest
};

struct RevisionCopies {
  std::vector<RevisionCopy> copies;  // sorted by node
  // Caches that did not parse, as "name: error"; they are left out of `copies`.
  std::vector<std::string> unreadable;

  [[nodiscard]] std::vector<std::string> NodesInState(std::string_view state) const;
};

// `digest` may be empty (the operator has not computed it yet); the digest of a spec entry
// that names the revision is used then.
[[nodiscard]] RevisionCopies FindRevisionCopies(const core::api::RevisionReference& revision,
                                                const std::string& digest,
                                                const std::vector<nlohmann::json>& caches);

// The status state of a copy, or "Requested" when only the spec names it (the agent has not
// reported it yet).
[[nodiscard]] std::string CopyState(const RevisionCopy& copy);

}  // namespace modelplane::cli
