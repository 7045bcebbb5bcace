#include "core/api/source_proofs.h"

namespace modelplane::core::api {

void AddSourceProofs(const std::string& node, const CachedRevision& cached,
                     const RevisionReference& revision, SourceProofs& proofs) {
  for (const SourceProof& proof : cached.source_proofs) {
    if (proof.revision != revision) continue;
    if (proof.state == kProofStateProven) {
      proofs.proven = true;
    } else if (proof.state == kProofStateFailed) {
      proofs.failed[node] = proof;
    }
  }
  if (proofs.proven) proofs.failed.clear();
}

CachedRevision EntryForRevision(const CachedRevision& cached, const std::string& node,
                                const SourceProofs& proofs) {
  if (proofs.proven || cached.state != kCacheStateReady) return cached;
  CachedRevision entry = cached;
  if (auto failed = proofs.failed.find(node); failed != proofs.failed.end()) {
    entry.state = kCacheStateFailed;
    entry.reason = failed->second.reason.empty() ? std::string(kCacheReasonPossessionNotProven)
                                                 : failed->second.reason;
    entry.message = failed->second.message;
    return entry;
  }
  entry.state = kCacheStateStaging;
  entry.reason.clear();
  entry.message =
      "proving that the revision's own sources serve the bytes this node holds for its digest";
  return entry;
}

}  // namespace modelplane::core::api
