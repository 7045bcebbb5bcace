// ModelRevocation (modelplane.io/v1alpha1, cluster-scoped): revocation by digest or by signer.
// An administrator who learns that some bytes must not run (a poisoned shard, a leaked or
// withdrawn model) names their digest once; it covers every ModelRevision, in any namespace,
// whose revision digest is that digest or one of whose files has it. One who learns that a
// signing key leaked, or that a signing identity must no longer vouch for models, names the key
// (its fingerprint) or the identity; it covers every revision whose verified signatures
// (status.signedBy) are all by revoked keys or identities, so a revision another, trusted
// signer also vouches for keeps running. The operator marks each
// covered revision's status (revokedBy), and from there every component treats it exactly as
// `spec.revoked: true`: agents withhold its blobs from peers, refuse mounts, set the pods'
// weights-ready condition False and purge; the extender places it nowhere.
//
// IsRevoked and ForcesPurge are the one place that says whether a revision is revoked, for
// every component.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/model_revision.h"
#include "core/api/object_meta.h"
#include "core/digest/sha256.h"
#include "core/error/error.h"

namespace modelplane::core::api {

inline constexpr std::string_view kModelRevocationKind = "ModelRevocation";

// Exactly one of digest, signing_key and signer_identity is set.
struct ModelRevocationSpec {
  std::string digest;  // "sha256:<64 hex>": a revision digest or a file's sha256
  // "sha256:<64 hex>" of a signing key's DER SubjectPublicKeyInfo, as status.signedBy's
  // publicKey: `openssl pkey -pubin -in key.pub -outform DER | sha256sum`.
  std::string signing_key;
  std::string signer_identity;  // a signing certificate's identity, as status.signedBy's
  std::string reason;           // for humans; copied into the revisions' status
  bool force = false;           // purge at once, even while pods mount the revision

  friend bool operator==(const ModelRevocationSpec&, const ModelRevocationSpec&) = default;
};

struct ModelRevocationStatus {
  std::int32_t revisions = 0;      // ModelRevisions it covers
  std::int32_t nodes_holding = 0;  // nodes whose caches still hold any of their bytes
  std::string phase;               // Purging, Purged

  friend bool operator==(const ModelRevocationStatus&, const ModelRevocationStatus&) = default;
};

struct ModelRevocation {
  ObjectMeta metadata;
  ModelRevocationSpec spec;
  std::optional<ModelRevocationStatus> status;

  friend bool operator==(const ModelRevocation&, const ModelRevocation&) = default;
};

inline constexpr std::string_view kRevocationPurging = "Purging";
inline constexpr std::string_view kRevocationPurged = "Purged";

// Parses and validates (exactly one of digest, signingKey and signerIdentity; digests and keys
// well-formed sha256 digests).
[[nodiscard]] Result<ModelRevocation> ModelRevocationFromJson(const nlohmann::json& value);
[[nodiscard]] nlohmann::json ToJson(const ModelRevocation& revocation);
[[nodiscard]] nlohmann::json ToJson(const ModelRevocationStatus& status);

// Whether `revocation` covers a revision with this spec and revision digest by digest.
[[nodiscard]] bool Covers(const ModelRevocationSpec& revocation, const Sha256Bytes& revision_digest,
                          const ModelRevisionSpec& spec);
// Whether `revocation` withdraws this one verified signature (its key or its identity).
[[nodiscard]] bool RevokesSignature(const ModelRevocationSpec& revocation,
                                    const SignedBy& signature);

// The revocation that covers a revision, the first by name: one that covers it by digest, or,
// when every one of its verified signatures (`signed_by`, non-empty) is withdrawn by some
// revocation, the first of those. Null when none covers it.
[[nodiscard]] const ModelRevocation* CoveringRevocation(
    const std::vector<ModelRevocation>& revocations, const Sha256Bytes& revision_digest,
    const ModelRevisionSpec& spec, const std::vector<SignedBy>& signed_by);

// spec.revoked, or a ModelRevocation covers it (status.revokedBy).
[[nodiscard]] bool IsRevoked(const ModelRevision& revision);
// Revoked and to be purged at once, even while mounted: the modelplane.io/purge=force
// annotation on a revoked revision, or a forcing ModelRevocation.
[[nodiscard]] bool ForcesPurge(const ModelRevision& revision);

}  // namespace modelplane::core::api
