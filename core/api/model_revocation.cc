#include "core/api/model_revocation.h"

#include <algorithm>

#include "core/api/limits.h"
#include "core/api/model_cache.h"
#include "core/json/json_object_reader.h"

namespace modelplane::core::api {
namespace {

Result<ModelRevocationSpec> SpecFromReader(const JsonObjectReader& reader) {
  ModelRevocationSpec spec;
  MODELPLANE_JSON_TRY(reader.String("digest", spec.digest, kMaxDigestLength));
  MODELPLANE_JSON_TRY(reader.String("signingKey", spec.signing_key, kMaxDigestLength));
  MODELPLANE_JSON_TRY(reader.String("signerIdentity", spec.signer_identity, kMaxShortString));
  MODELPLANE_JSON_TRY(reader.String("reason", spec.reason, kMaxShortString));
  MODELPLANE_JSON_TRY(reader.Bool("force", spec.force));
  return spec;
}

Result<ModelRevocationStatus> StatusFromReader(const JsonObjectReader& reader) {
  ModelRevocationStatus status;
  MODELPLANE_JSON_TRY(reader.Int32("revisions", status.revisions));
  MODELPLANE_JSON_TRY(reader.Int32("nodesHolding", status.nodes_holding));
  MODELPLANE_JSON_TRY(reader.String("phase", status.phase, kMaxEnumLength));
  return status;
}

}  // namespace

Result<ModelRevocation> ModelRevocationFromJson(const nlohmann::json& value) {
  auto reader = JsonObjectReader::Create(value, "");
  if (!reader) return std::unexpected(reader.error());
  ModelRevocation revocation;
  auto meta = ReadTypeAndObjectMeta(*reader, kApiVersion, kModelRevocationKind);
  if (!meta) return std::unexpected(meta.error());
  revocation.metadata = std::move(*meta);
  MODELPLANE_JSON_TRY(
      reader->RequiredObject<ModelRevocationSpec>("spec", revocation.spec, SpecFromReader));
  MODELPLANE_JSON_TRY(
      reader->Object<ModelRevocationStatus>("status", revocation.status, StatusFromReader));
  const ModelRevocationSpec& spec = revocation.spec;
  auto refuse = [&](const std::string& problem) {
    return Error(ErrorCode::kInvalidArgument,
                 "ModelRevocation " + revocation.metadata.name + ": " + problem);
  };
  const int named = static_cast<int>(!spec.digest.empty()) +
                    static_cast<int>(!spec.signing_key.empty()) +
                    static_cast<int>(!spec.signer_identity.empty());
  if (named != 1) {
    return std::unexpected(
        refuse("spec must name exactly one of digest, signingKey and signerIdentity"));
  }
  if (!spec.digest.empty()) {
    if (auto digest = ParseDigest(spec.digest); !digest) {
      return std::unexpected(refuse("spec.digest: " + digest.error().message()));
    }
  }
  if (!spec.signing_key.empty()) {
    if (auto key = ParseDigest(spec.signing_key); !key) {
      return std::unexpected(refuse("spec.signingKey: " + key.error().message()));
    }
  }
  return revocation;
}

nlohmann::json ToJson(const ModelRevocationStatus& status) {
  return {{"revisions", status.revisions},
          {"nodesHolding", status.nodes_holding},
          {"phase", status.phase}};
}

nlohmann::json ToJson(const ModelRevocation& revocation) {
  nlohmann::json out = {
      {"apiVersion", kApiVersion},
      {"kind", kModelRevocationKind},
      {"metadata", ToJson(revocation.metadata)},
      {"spec", {{"reason", revocation.spec.reason}, {"force", revocation.spec.force}}}};
  nlohmann::json& spec = out["spec"];
  if (!revocation.spec.digest.empty()) spec["digest"] = revocation.spec.digest;
  if (!revocation.spec.signing_key.empty()) spec["signingKey"] = revocation.spec.signing_key;
  if (!revocation.spec.signer_identity.empty()) {
    spec["signerIdentity"] = revocation.spec.signer_identity;
  }
  if (revocation.status) out["status"] = ToJson(*revocation.status);
  return out;
}

bool Covers(const ModelRevocationSpec& revocation, const Sha256Bytes& revision_digest,
            const ModelRevisionSpec& spec) {
  if (revocation.digest.empty()) return false;
  const auto digest = ParseDigest(revocation.digest);
  if (!digest) return false;
  if (*digest == revision_digest) return true;
  return std::ranges::any_of(spec.files, [&](const ModelFile& file) {
    const auto file_digest = ParseDigest(file.sha256, /*allow_bare=*/true);
    return file_digest && *file_digest == *digest;
  });
}

bool RevokesSignature(const ModelRevocationSpec& revocation, const SignedBy& signature) {
  if (!revocation.signing_key.empty()) return revocation.signing_key == signature.public_key;
  if (!revocation.signer_identity.empty()) {
    return revocation.signer_identity == signature.identity;
  }
  return false;
}

const ModelRevocation* CoveringRevocation(const std::vector<ModelRevocation>& revocations,
                                          const Sha256Bytes& revision_digest,
                                          const ModelRevisionSpec& spec,
                                          const std::vector<SignedBy>& signed_by) {
  const ModelRevocation* first = nullptr;
  auto consider = [&](const ModelRevocation& revocation) {
    if (first == nullptr || revocation.metadata.name < first->metadata.name) first = &revocation;
  };
  for (const ModelRevocation& revocation : revocations) {
    if (Covers(revocation.spec, revision_digest, spec)) consider(revocation);
  }
  if (signed_by.empty()) return first;
  // Signer revocations cover only together: each signature must be withdrawn by one of them.
  for (const SignedBy& signature : signed_by) {
    const auto found = std::ranges::find_if(revocations, [&](const ModelRevocation& revocation) {
      return RevokesSignature(revocation.spec, signature);
    });
    if (found == revocations.end()) return first;
  }
  for (const ModelRevocation& revocation : revocations) {
    if (std::ranges::any_of(signed_by, [&](const SignedBy& signature) {
          return RevokesSignature(revocation.spec, signature);
        })) {
      consider(revocation);
    }
  }
  return first;
}

bool IsRevoked(const ModelRevision& revision) {
  return revision.spec.revoked || (revision.status && revision.status->revoked_by);
}

bool ForcesPurge(const ModelRevision& revision) {
  if (revision.status && revision.status->revoked_by && revision.status->revoked_by->force) {
    return true;
  }
  const auto& annotations = revision.metadata.annotations;
  const auto purge = annotations.find(std::string(kPurgeAnnotation));
  return revision.spec.revoked && purge != annotations.end() && purge->second == kPurgeForce;
}

}  // namespace modelplane::core::api
