#include "core/hub/model_scope_api.h"

#include <fmt/format.h>

#include "core/api/hub_source.h"
#include "core/hub/hub_errors.h"
#include "core/hub/model_scope_answers.h"
#include "core/text/percent_encoding.h"

namespace modelplane::core {

Result<std::string> ModelScopeApi::ResolveCommit(const std::string& repository,
                                                 const std::string& revision) {
  // A commit needs no lookup: the listing at it says whether the repository has it.
  if (api::CheckHubCommit(revision).empty()) return revision;
  const HubCallContext context = transport_->Context(HubCall::kRevision, repository, revision);
  auto answer = transport_->FetchJson(
      fmt::format("{}/api/v1/models/{}/revisions", transport_->endpoint(), repository), context);
  if (!answer) return std::unexpected(answer.error());
  auto commit = CommitOfModelScopeRevision(answer->body, revision);
  if (!commit) return std::unexpected(commit.error());
  if (!*commit) {
    return std::unexpected(HubRefusal(
        HubReason::kRevisionNotFound,
        fmt::format("revision {} of {} not found (no such branch or tag)", revision, repository)));
  }
  return std::move(**commit);
}

Result<std::vector<HubFile>> ModelScopeApi::ListFiles(const std::string& repository,
                                                      const std::string& commit) {
  const HubCallContext context = transport_->Context(HubCall::kTree, repository, commit);
  auto answer =
      transport_->FetchJson(fmt::format("{}/api/v1/models/{}/repo/files?Revision={}&Recursive=True",
                                        transport_->endpoint(), repository, PercentEncode(commit)),
                            context);
  if (!answer) return std::unexpected(answer.error());
  auto files = ParseModelScopeFiles(answer->body);
  if (!files) return std::unexpected(files.error());
  if (!*files) {
    return std::unexpected(HubRefusal(
        HubReason::kRevisionNotFound,
        fmt::format("revision {} of {} not found (the listing has no files)", commit, repository)));
  }
  if ((*files)->size() >= kModelScopeListingCut ||
      (*files)->size() > transport_->options().max_tree_files) {
    return std::unexpected(HubRefusal(
        HubReason::kAnswerTooLarge,
        fmt::format("{} lists {} files, where ModelScope cuts a listing short; importing it "
                    "folder by folder is not done yet",
                    repository, (*files)->size())));
  }
  return std::move(**files);
}

Result<HubFileContent> ModelScopeApi::ReadFile(const std::string& repository,
                                               const std::string& commit, const HubFile& file,
                                               std::size_t keep_limit) {
  return transport_->ReadFile(
      fmt::format("{}/api/v1/models/{}/repo?Revision={}&FilePath={}", transport_->endpoint(),
                  repository, PercentEncode(commit), PercentEncode(file.path)),
      file, keep_limit, transport_->Context(HubCall::kFile, repository, commit, file.path));
}

}  // namespace modelplane::core
