#include "core/hub/hub_api_client.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/api/hub_source.h"
#include "core/cancel/cancellation_token.h"
#include "core/digest/sha256.h"
#include "core/http/redirect_follower.h"
#include "core/http/url.h"
#include "core/hub/hub_errors.h"
#include "core/json/json_document.h"
#include "core/text/percent_encoding.h"

namespace modelplane::core {
namespace {

namespace http = boost::beast::http;

std::string LowercaseOrigin(const Url& url) {
  std::string origin = url.Origin();
  std::ranges::transform(origin, origin.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return origin;
}

// Ok when `url` is on `origin`; HubUnexpectedRedirect naming where it went otherwise.
Status RequireOrigin(const Url& url, const std::string& origin, std::string_view what) {
  if (LowercaseOrigin(url) == origin) return Ok();
  return std::unexpected(HubRefusal(HubReason::kUnexpectedRedirect,
                                    fmt::format("{} redirected to {}, off the endpoint's origin {}",
                                                what, url.Origin(), origin)));
}

bool IsThrottlingStatus(const std::optional<unsigned>& status) {
  return status == 429u || status == 503u;
}

}  // namespace

Result<std::unique_ptr<HubApiClient>> HubApiClient::Create(HubClientOptions options,
                                                           const Clock& clock) {
  while (!options.endpoint.empty() && options.endpoint.back() == '/') options.endpoint.pop_back();
  auto endpoint = Url::Parse(options.endpoint);
  if (!endpoint || endpoint->target != "/") {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("the hub endpoint must be an http(s) URL without a path, not {}",
                                 options.endpoint));
  }
  if (options.token && options.token->find_first_of("\r\n") != std::string::npos) {
    return MakeError(ErrorCode::kInvalidArgument, "the token holds a line break");
  }
  // A Retry-After is this client's to honour (waited here, plus a second, and bounded), so the
  // HTTP client hands every such answer back at once instead of waiting on its own.
  options.http.retry.max_retry_after = std::chrono::milliseconds(0);
  auto http_client = HttpClient::Create(options.http);
  if (!http_client) return std::unexpected(http_client.error());
  std::string origin = LowercaseOrigin(*endpoint);
  return std::unique_ptr<HubApiClient>(
      new HubApiClient(std::move(options), std::move(*http_client), std::move(origin), clock));
}

HubApiClient::HubApiClient(HubClientOptions options, std::unique_ptr<HttpClient> http,
                           std::string origin, const Clock& clock)
    : options_(std::move(options)),
      http_(std::move(http)),
      origin_(std::move(origin)),
      clock_(clock) {}

HubApiClient::~HubApiClient() = default;

ClientRequest HubApiClient::RequestFor(const std::string& url) const {
  ClientRequest request;
  request.url = url;
  request.clock = &clock_;
  const auto parsed = Url::Parse(url);
  if (options_.token && parsed && LowercaseOrigin(*parsed) == origin_) {
    request.headers.set(http::field::authorization, "Bearer " + *options_.token);
  }
  return request;
}

HubCallContext HubApiClient::Context(HubCall call, const std::string& repository,
                                     const std::string& revision, const std::string& path) const {
  return {.call = call,
          .endpoint = options_.endpoint,
          .repository = repository,
          .revision = revision,
          .path = path,
          .token_sent = options_.token.has_value()};
}

template <typename Value>
Result<Value> HubApiClient::WithThrottleWaits(const std::function<Result<Value>()>& attempt,
                                              const HubCallContext& context) {
  for (int waits = 0;; ++waits) {
    Result<Value> result = attempt();
    if (result) return result;
    const Error& error = result.error();
    if (!IsThrottlingStatus(error.http_status()) || HubReasonOf(error)) {
      return std::unexpected(RefusalForFailure(error, context));
    }
    const Error refusal = RefusalForFailure(error, context);
    if (!error.retry_after()) {
      // The HTTP client already backed off and retried an answer that named no wait.
      return std::unexpected(HubRefusal(HubReason::kThrottled, refusal.message()));
    }
    const auto wait =
        std::chrono::ceil<std::chrono::seconds>(*error.retry_after()) + std::chrono::seconds(1);
    if (wait > options_.max_throttle_wait) {
      return std::unexpected(HubRefusal(
          HubReason::kThrottled,
          fmt::format("{}; it asks to wait {} s, longer than the {} s allowed", refusal.message(),
                      wait.count() - 1, options_.max_throttle_wait.count())));
    }
    if (waits >= options_.max_throttle_waits) {
      return std::unexpected(
          HubRefusal(HubReason::kThrottled,
                     fmt::format("{}; still throttled after {} waits", refusal.message(), waits)));
    }
    if (options_.note) {
      options_.note(fmt::format("the hub asked to slow down (HTTP {}); waiting {} s",
                                *error.http_status(), wait.count()));
    }
    CancellationToken never_cancelled;
    (void)never_cancelled.SleepFor(clock_, wait);
  }
}

Result<ClientResponse> HubApiClient::FetchJson(const std::string& url,
                                               const HubCallContext& context) {
  const std::function<Result<ClientResponse>()> attempt = [&]() -> Result<ClientResponse> {
    RedirectRules rules;
    rules.allow = [this](const Url& target) { return RequireOrigin(target, origin_, "the API"); };
    auto fetched = FetchFollowing(*http_, RequestFor(url), options_.max_json_bytes, rules);
    if (!fetched) return std::unexpected(fetched.error());
    return std::move(fetched->response);
  };
  return WithThrottleWaits(attempt, context);
}

Result<std::string> HubApiClient::ResolveCommit(const std::string& repository,
                                                const std::string& revision) {
  const HubCallContext context = Context(HubCall::kRevision, repository, revision);
  auto answer = FetchJson(fmt::format("{}/api/models/{}/revision/{}", options_.endpoint, repository,
                                      PercentEncode(revision)),
                          context);
  if (!answer) return std::unexpected(answer.error());
  auto document = ParseJsonDocument(answer->body, {.max_bytes = options_.max_json_bytes});
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

Result<std::vector<HubFile>> HubApiClient::ListFiles(const std::string& repository,
                                                     const std::string& commit) {
  const HubCallContext context = Context(HubCall::kTree, repository, commit);
  std::vector<HubFile> files;
  std::string url =
      fmt::format("{}/api/models/{}/tree/{}?recursive=true", options_.endpoint, repository, commit);
  for (std::size_t pages = 1;; ++pages) {
    auto answer = FetchJson(url, context);
    if (!answer) return std::unexpected(answer.error());
    auto page = ParseTreePage(answer->body);
    if (!page) return std::unexpected(page.error());
    files.insert(files.end(), std::make_move_iterator(page->begin()),
                 std::make_move_iterator(page->end()));
    if (files.size() > options_.max_tree_files) {
      return std::unexpected(HubRefusal(
          HubReason::kAnswerTooLarge,
          fmt::format("{} lists more than {} files", repository, options_.max_tree_files)));
    }
    const auto link = answer->headers.find(http::field::link);
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
    if (auto home = RequireOrigin(*parsed, origin_, "the tree listing's next page"); !home) {
      return std::unexpected(home.error());
    }
    if (pages >= options_.max_tree_pages) {
      return std::unexpected(HubRefusal(
          HubReason::kAnswerTooLarge,
          fmt::format("{}'s listing has more than {} pages", repository, options_.max_tree_pages)));
    }
    url = std::move(*next);
  }
}

Result<HubFileContent> HubApiClient::ReadFile(const std::string& repository,
                                              const std::string& commit, const HubFile& file,
                                              std::size_t keep_limit) {
  const HubCallContext context = Context(HubCall::kFile, repository, commit, file.path);
  if (keep_limit > 0 && static_cast<std::uint64_t>(file.size) > keep_limit) {
    return std::unexpected(
        HubRefusal(HubReason::kAnswerTooLarge,
                   fmt::format("{} holds {} bytes, more than the {} this import reads", file.path,
                               file.size, keep_limit)));
  }
  const std::string url = fmt::format("{}/{}/resolve/{}/{}", options_.endpoint, repository, commit,
                                      PercentEncode(file.path, /*keep_slash=*/true));
  RedirectRules rules;
  if (!file.is_lfs()) {
    rules.allow = [this](const Url& target) {
      return RequireOrigin(target, origin_, "a small file's download");
    };
  }
  const std::function<Result<HubFileContent>()> attempt = [&]() -> Result<HubFileContent> {
    auto hasher = Sha256::Create();
    if (!hasher) return std::unexpected(hasher.error());
    HubFileContent content;
    const BodySink sink = [&](std::span<const std::byte> data) -> Status {
      content.size += static_cast<std::int64_t>(data.size());
      if (content.size > file.size) {
        return std::unexpected(HubRefusal(
            HubReason::kListingMismatch,
            fmt::format("{} sent more than the {} bytes the listing gives", file.path, file.size)));
      }
      hasher->Update(data);
      if (keep_limit > 0)
        content.bytes.append(reinterpret_cast<const char*>(data.data()), data.size());
      return Ok();
    };
    auto streamed = FetchStreamFollowing(*http_, RequestFor(url), sink, {}, rules);
    if (!streamed) return std::unexpected(streamed.error());
    content.sha256 = FormatDigest(hasher->Finish());
    return content;
  };
  auto content = WithThrottleWaits(attempt, context);
  if (!content) return content;
  if (content->size != file.size) {
    return std::unexpected(HubRefusal(HubReason::kListingMismatch,
                                      fmt::format("{} sent {} bytes; the listing gives {}",
                                                  file.path, content->size, file.size)));
  }
  if (file.is_lfs() && content->sha256 != "sha256:" + file.lfs_sha256) {
    return std::unexpected(HubRefusal(HubReason::kListingMismatch,
                                      fmt::format("{} hashed to {}; the listing gives sha256:{}",
                                                  file.path, content->sha256, file.lfs_sha256)));
  }
  return content;
}

}  // namespace modelplane::core
