// The ModelRevisions the control loop's informer holds, each checked and digested once per
// resourceVersion (the digest is a hash over the spec; recomputing every revision on every pass
// would cost more than the pass), and indexed by digest: the store is content-addressed, so
// eviction and revocation speak digests while pods and specs speak names.
//
// The revisions come from the RevisionReader (read by name); what the operator says about the
// digests this node holds (ModelCache spec.holdings) is fresher and wins: a holding's revoked
// and forcePurge decide for its digest.
//
// Each revision's model signatures are verified here too (core/signing), against the agent's own
// copy of the signature policy: a revision whose signatures do not verify, or that lacks one
// its namespace requires, is invalid with a fixed reason, so it is neither staged, nor reported
// Ready from bytes the node already holds, nor mounted.
//
// Revocation by digest: otherwise a digest counts as revoked when a ModelRevision with it is
// revoked and none that is not revoked names it (another namespace's identical, unrevoked revision
// keeps the bytes serving that namespace). A ModelRevocation covers every one of them: the operator
// marks each covered revision's status, and core::api::IsRevoked reads spec and status alike.
// The purge is forced when a revoked one carries modelplane.io/purge: force or its
// ModelRevocation forces it.
// Thread safety: not thread-safe; the control loop's worker owns it.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/api/model_cache.h"
#include "core/kube/object_store.h"
#include "core/signing/signature_policy.h"
#include "node-agent/revision/loaded_revision.h"
#include "node-agent/store/revision_manifest.h"

namespace modelplane::agent {

class RevisionIndex {
 public:
  struct Entry {
    std::string resource_version;
    std::optional<LoadedRevision> loaded;  // nullopt: invalid
    std::string problem;                   // why it is invalid
    std::string reason;                    // a fixed reason (Signature*), or empty
  };

  // Rebuilds the index from the revisions read, reusing unchanged entries. `signatures`: the
  // signature policy (null: none configured, so any signature is untrusted); `now` for
  // revisions that carry no creationTimestamp (core/signing/signature_time.h).
  void Refresh(const std::vector<core::ObjectPtr>& objects, const core::SignaturePolicy* signatures,
               std::chrono::system_clock::time_point now);
  void SetHoldings(const std::vector<core::api::Holding>& holdings);
  // The operator's word on a digest this node holds; null when it has none.
  [[nodiscard]] const core::api::Holding* HoldingOf(const core::Sha256Bytes& digest) const;
  [[nodiscard]] const std::map<core::Sha256Bytes, core::api::Holding>& holdings() const {
    return holdings_;
  }

  [[nodiscard]] const Entry* Find(const std::string& key) const;
  [[nodiscard]] const std::map<core::Sha256Bytes, std::vector<std::string>>& by_digest() const {
    return by_digest_;
  }
  [[nodiscard]] bool Revoked(const core::Sha256Bytes& digest) const;
  [[nodiscard]] bool ForcePurge(const core::Sha256Bytes& digest) const;
  // "<type>/<name>" of every source the revisions with this digest name (RangeSource names).
  [[nodiscard]] std::vector<std::string> OriginSources(const core::Sha256Bytes& digest) const;
  // The first valid revision with this digest, for its files and name.
  [[nodiscard]] const LoadedRevision* AnyWithDigest(const core::Sha256Bytes& digest) const;

 private:
  std::map<std::string, Entry> entries_;  // "namespace/name"
  std::map<core::Sha256Bytes, std::vector<std::string>> by_digest_;
  std::map<core::Sha256Bytes, core::api::Holding> holdings_;
};

// The manifest files of a revision's spec (sizes and digests as the fetch engine stages them).
[[nodiscard]] std::vector<ManifestFile> SpecFiles(const LoadedRevision& revision);

}  // namespace modelplane::agent
