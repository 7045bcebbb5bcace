#include "core/api/model_revocation.h"

#include <algorithm>

#include "core/api/limits.h"
#include "core/api/model_cache.h"
#include "core/json/json_object_reader.h"

namespace modelplane::core::api {
namespace {

Result<ModelRevocationSpec> SpecFromReader(const JsonObjectReader& reader) {
  ModelRevocationSpec spec;
  MODELPLANE_JSON_TRY(reader.String("digest", spec.digest, kMaxDigestLength, Presence::kRequired));
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
  if (auto digest = ParseDigest(revocation.spec.digest); !digest) {
    return std::unexpected(
        Error(ErrorCode::kInvalidArgument, "ModelRevocation " + revocation.metadata.name +
                                               ": spec.digest: " + digest.error().message()));
  }
  return revocation;
}

nlohmann::json ToJson(const ModelRevocationStatus& status) {
  return {{"revisions", status.revisions},
          {"nodesHolding", status.nodes_holding},
          {"phase", status.phase}};
}

nlohmann::json ToJson(const ModelRevocation& revocation) {
  nlohmann::json out = {{"apiVersion", kApiVersion},
                        {"kind", kModelRevocationKind},
                        {"metadata", ToJson(revocation.metadata)},
                        {"spec",
                         {{"digest", revocation.spec.digest},
                          {"reason", revocation.spec.reason},
                          {"force", revocation.spec.force}}}};
  if (revocation.status) out["status"] = ToJson(*revocation.status);
  return out;
}

bool Covers(const ModelRevocationSpec& revocation, const Sha256Bytes& revision_digest,
            const ModelRevisionSpec& spec) {
  const auto digest = ParseDigest(revocation.digest);
  if (!digest) return false;
  if (*digest == revision_digest) return true;
  return std::ranges::any_of(spec.files, [&](const ModelFile& file) {
    const auto file_digest = ParseDigest(file.sha256, /*allow_bare=*/true);
    return file_digest && *file_digest == *digest;
  });
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
