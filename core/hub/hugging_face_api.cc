#include "core/hub/hugging_face_api.h"

#include <fmt/format.h>

#include "core/api/hub_source.h"
#include "core/hub/hub_errors.h"
#include "core/hub/hub_tree_page.h"
#include "core/json/json_document.h"
#include "core/text/percent_encoding.h"

namespace modelplane::core {

Result<std::string> HuggingFaceApi::ResolveCommit(const std::string& repository,
                                                  const std::string& revision) {
  const HubCallContext context = transport_->Context(HubCall::kRevision, repository, revision);
  auto answer =
      transport_->FetchJson(fmt::format("{}/api/models/{}/revision/{}", transport_->endpoint(),
                                        repository, PercentEncode(revision)),
                            context);
  if (!answer) return std::unexpected(answer.error());
  auto document =
      ParseJsonDocument(answer->body, {.max_bytes = transport_->options().max_json_bytes});
  const nlohmann::json* sha = nullptr;
  if (document && document->is_object()) {
    const auto found = document->find("sha");
    if (found != document->end() && found->is_string()) sha = &*found;
  }
  if (sha == nullptr || !api::CheckHubCommit(sha->get_ref<const std::string&>()).empty()) {
    return std::unexpected(HubRefusal(
        HubReason::kMalformedAnswer,
        fmt::format("the revision lookup of {}@{} answered without a commit in \"sha\"{}",
                    repository, revision,
                    document ? "" : fmt::format(" ({})", document.error().message()))));
  }
  return sha->get<std::string>();
}

Result<std::vector<HubFile>> HuggingFaceApi::ListFiles(const std::string& repository,
                                                       const std::string& commit) {
  const HubClientOptions& options = transport_->options();
  const HubCallContext context = transport_->Context(HubCall::kTree, repository, commit);
  std::vector<HubFile> files;
  std::string url = fmt::format("{}/api/models/{}/tree/{}?recursive=true", transport_->endpoint(),
                                repository, commit);
  for (std::size_t pages = 1;; ++pages) {
    auto answer = transport_->FetchJson(url, context);
    if (!answer) return std::unexpected(answer.error());
    auto page = ParseTreePage(answer->body);
    if (!page) return std::unexpected(page.error());
    files.insert(files.end(), std::make_move_iterator(page->begin()),
                 std::make_move_iterator(page->end()));
    if (files.size() > options.max_tree_files) {
      return std::unexpected(HubRefusal(
          HubReason::kAnswerTooLarge,
          fmt::format("{} lists more than {} files", repository, options.max_tree_files)));
    }
    const auto link = answer->headers.find(boost::beast::http::field::link);
    if (link == answer->headers.end()) return files;
    std::optional<std::string> next =
        NextPageLink(std::string_view(link->value().data(), link->value().size()));
    if (!next) return files;
    auto parsed = Url::Parse(*next);
    if (!parsed) {
      return std::unexpected(HubRefusal(
          HubReason::kMalformedAnswer,
          fmt::format("the tree listing's next page is not an absolute URL: {}", *next)));
    }
    if (auto home = transport_->RequireHome(*parsed, "the tree listing's next page"); !home) {
      return std::unexpected(home.error());
    }
    if (pages >= options.max_tree_pages) {
      return std::unexpected(HubRefusal(
          HubReason::kAnswerTooLarge,
          fmt::format("{}'s listing has more than {} pages", repository, options.max_tree_pages)));
    }
    url = std::move(*next);
  }
}

Result<HubFileContent> HuggingFaceApi::ReadFile(const std::string& repository,
                                                const std::string& commit, const HubFile& file,
                                                std::size_t keep_limit) {
  return transport_->ReadFile(fmt::format("{}/{}/resolve/{}/{}", transport_->endpoint(), repository,
                                          commit, PercentEncode(file.path, /*keep_slash=*/true)),
                              file, keep_limit,
                              transport_->Context(HubCall::kFile, repository, commit, file.path));
}

}  // namespace modelplane::core
