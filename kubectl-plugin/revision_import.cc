#include "kubectl-plugin/revision_import.h"

#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/api/hub_source.h"
#include "core/hub/hub_errors.h"
#include "core/manifest/file_roles.h"
#include "core/manifest/shard_index.h"

namespace modelplane::cli {
namespace {

namespace api = core::api;

constexpr std::size_t kShardsNamedInARefusal = 5;

struct ChosenFile {
  core::HubFile file;
  std::string role;
};

// Why the index names shards the chosen files lack, naming a few of them.
core::Error IndexMismatch(const std::string& index_path, const std::vector<std::string>& missing,
                          const std::vector<core::HubFile>& listing) {
  const bool all_listed = std::ranges::all_of(missing, [&listing](const std::string& shard) {
    return std::ranges::any_of(listing,
                               [&shard](const core::HubFile& file) { return file.path == shard; });
  });
  const std::size_t named = std::min(missing.size(), kShardsNamedInARefusal);
  return core::HubRefusal(
      core::HubReason::kIndexMismatch,
      fmt::format(
          "{} names {} shard(s) {}: {}{}", index_path, missing.size(),
          all_listed ? "left out by --include/--exclude" : "that the repository lacks",
          fmt::join(missing.begin(), missing.begin() + static_cast<std::ptrdiff_t>(named), ", "),
          missing.size() > named ? ", ..." : ""));
}

api::ModelSource HubSource(const ImportRequest& request, const std::string& commit) {
  api::ModelSource source;
  source.name = "hub";
  source.type = request.reference.source_type;
  api::HubLocation location{.repository = request.reference.repository, .commit = commit};
  api::ModelSource default_hub;
  default_hub.type = source.type;
  if (request.endpoint != api::HubEndpoint(default_hub)) location.endpoint = request.endpoint;
  if (source.type == api::kSourceModelScope) {
    source.model_scope = std::move(location);
  } else {
    source.hugging_face = std::move(location);
  }
  if (!request.credentials_secret.empty()) {
    source.credentials_secret_ref = api::SecretReference{.name = request.credentials_secret};
  }
  return source;
}

}  // namespace

core::Result<ImportResult> ImportRevision(core::HubApi& hub, const ImportRequest& request) {
  const std::string& repository = request.reference.repository;
  auto commit = hub.ResolveCommit(repository, request.reference.revision);
  if (!commit) return std::unexpected(commit.error());
  auto listing = hub.ListFiles(repository, *commit);
  if (!listing) return std::unexpected(listing.error());

  ImportResult result;
  std::vector<ChosenFile> chosen;
  std::set<std::string> chosen_paths;
  for (const core::HubFile& file : *listing) {
    if (!request.selection.Chooses(file.path)) continue;
    std::optional<std::string> role = core::RoleForPath(file.path);
    if (!role) {
      result.skipped.push_back(file.path);
      continue;
    }
    chosen_paths.insert(file.path);
    chosen.push_back({file, std::move(*role)});
  }
  if (chosen.empty()) {
    return core::MakeError(
        core::ErrorCode::kInvalidArgument,
        fmt::format("nothing to import: no file of {}@{} (commit {}) is chosen and has a role "
                    "(weights, index, config, tokenizer...); {} listed, {} without a role",
                    repository, request.reference.revision, *commit, listing->size(),
                    result.skipped.size()));
  }

  std::vector<api::ModelFile> files;
  for (const ChosenFile& entry : chosen) {
    const core::HubFile& file = entry.file;
    api::ModelFile described{.path = file.path, .size = file.size, .role = entry.role};
    const bool index = core::IsSafetensorsIndex(file.path);
    if (!file.sha256.empty() && !index) {
      described.sha256 = "sha256:" + file.sha256;
    } else {
      auto content = hub.ReadFile(repository, *commit, file, index ? kMaxIndexBytes : 0);
      if (!content) return std::unexpected(content.error());
      if (file.sha256.empty()) ++result.downloaded;
      described.sha256 = content->sha256;
      if (index) {
        auto missing = core::ShardsMissingFrom(file.path, content->bytes, chosen_paths);
        if (!missing) {
          return std::unexpected(
              core::HubRefusal(core::HubReason::kIndexMismatch, missing.error().message()));
        }
        if (!missing->empty()) return std::unexpected(IndexMismatch(file.path, *missing, *listing));
      }
    }
    files.push_back(std::move(described));
  }
  std::ranges::sort(files, {}, &api::ModelFile::path);

  api::ModelRevisionSpec spec = core::SpecFromDefaults(request.execution);
  spec.repository_revision = request.reference.revision;
  spec.base = request.base;
  auto revision = core::BuildRevision(request.name, request.namespace_name, std::move(spec),
                                      std::move(files), HubSource(request, *commit));
  if (!revision) return std::unexpected(revision.error());
  result.revision = std::move(*revision);
  std::ranges::sort(result.skipped);
  return result;
}

}  // namespace modelplane::cli
