#include "operator/controllers/source_proofs.h"

#include "operator/controllers/held_copies.h"

namespace modelplane::controller {

namespace api = core::api;

api::SourceProofs ObserveSourceProofs(const core::ObjectStore& caches,
                                      core::ParsedObjects<api::ModelCache>& parsed,
                                      const std::string& digest,
                                      const api::RevisionReference& revision) {
  api::SourceProofs proofs;
  ForEachHeldEntry(caches, parsed, digest,
                   [&](const api::ModelCache& cache, const api::CachedRevision& cached) {
                     api::AddSourceProofs(cache.metadata.name, cached, revision, proofs);
                   });
  return proofs;
}

}  // namespace modelplane::controller
