#include "node-agent/revision/loaded_revision.h"

#include "core/api/model_revision_validation.h"
#include "core/api/object_key.h"
#include "core/api/revision_digest.h"

namespace modelplane::agent {

core::Result<LoadedRevision> CheckRevision(core::api::ModelRevision revision) {
  const auto problems = core::api::ValidateModelRevisionSpec(revision.spec);
  if (auto status = core::api::ProblemsToStatus(problems); !status) {
    return std::unexpected(status.error());
  }
  auto digest_text = core::api::ComputeRevisionDigest(revision.spec);
  if (!digest_text) return std::unexpected(digest_text.error());
  auto digest = core::ParseDigest(*digest_text);
  if (!digest) return std::unexpected(digest.error());
  return LoadedRevision{.revision = std::move(revision), .digest = *digest};
}

core::Result<FetchRequest> MakeFetchRequest(const LoadedRevision& loaded) {
  FetchRequest request{.revision_digest = loaded.digest,
                       .name = core::api::ObjectKey(loaded.revision.metadata.namespace_name,
                                                    loaded.revision.metadata.name)};
  for (const core::api::ModelFile& file : loaded.revision.spec.files) {
    auto sha = core::ParseDigest(file.sha256);
    if (!sha) return std::unexpected(sha.error().Wrap(file.path));
    request.files.push_back(
        {.path = file.path, .size = static_cast<std::uint64_t>(file.size), .sha256 = *sha});
  }
  return request;
}

}  // namespace modelplane::agent
