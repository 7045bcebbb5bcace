// A ModelRevision checked the way the operator checks it (the validator, then the revision
// digest), and the fetch request that stages its files. What the agent's control loop, its
// stager and the standalone `fetch` command share.
// Thread safety: pure functions.
#pragma once

#include "core/api/model_revision.h"
#include "core/digest/sha256.h"
#include "core/error/error.h"
#include "node-agent/fetch/fetch_engine.h"

namespace modelplane::agent {

struct LoadedRevision {
  core::api::ModelRevision revision;
  core::Sha256Bytes digest{};  // the revision digest (core/api/revision_digest.h)
};

// An invalid spec lists every problem the validator found.
[[nodiscard]] core::Result<LoadedRevision> CheckRevision(core::api::ModelRevision revision);

// The files of the revision as the engine wants them (sources are added by the caller).
[[nodiscard]] core::Result<FetchRequest> MakeFetchRequest(const LoadedRevision& loaded);

}  // namespace modelplane::agent
