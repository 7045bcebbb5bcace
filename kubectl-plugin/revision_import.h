// A ModelRevision for a hub repository (the Hugging Face Hub or ModelScope) at one revision, the
// way `kubectl modelplane import` writes it: the revision resolved to a commit once, the files
// chosen by the selection and by role, each with its size and sha256.
//
// A file whose sha256 the listing gives (the Hugging Face Hub's LFS files, every file on
// ModelScope) takes it from there; the others (the Hub's plain git files) are downloaded and
// hashed, and must have the listing's size. Files without
// a role (README.md, *.bin...) are left out and returned in `skipped`. A safetensors index is
// read (it is small, and bounded by kMaxIndexBytes) and must name only chosen shards, else the
// import is refused (HubIndexMismatch), because such a revision would load nowhere.
//
// The source is {name: "hub", type: huggingFace (or modelScope), huggingFace (or modelScope):
// {repository, commit, endpoint only when it is not the hub's own}}; spec.repositoryRevision
// keeps what the user asked for (a branch or tag reads better than a commit).
// Thread safety: one thread; the client is used by it alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/api/model_revision.h"
#include "core/error/error.h"
#include "core/hub/hub_api.h"
#include "core/hub/hub_reference.h"
#include "core/manifest/file_selection.h"
#include "core/manifest/revision_builder.h"

namespace modelplane::cli {

// The largest safetensors index read: a model with 100,000 tensors has one of about 10 MB.
inline constexpr std::size_t kMaxIndexBytes = 32 * 1024 * 1024;

struct ImportRequest {
  core::HubReference reference;
  std::string endpoint;        // where `hub` talks to, without a trailing '/'
  std::string name;            // metadata.name
  std::string namespace_name;  // empty: left out (kubectl apply uses the context's)
  core::FileSelection selection{{}, {}};
  core::ExecutionDefaults execution;
  std::string credentials_secret;  // empty: no credentialsSecretRef
  // Set: the repository is a LoRA adapter of the revision with this digest (spec.base).
  std::optional<core::api::BaseRevision> base;
};

struct ImportResult {
  core::api::ModelRevision revision;
  std::vector<std::string> skipped;  // chosen by the selection but without a role
  std::size_t downloaded = 0;        // files without a listed sha256, hashed here
};

[[nodiscard]] core::Result<ImportResult> ImportRevision(core::HubApi& hub,
                                                        const ImportRequest& request);

}  // namespace modelplane::cli
