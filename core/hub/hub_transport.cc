#include "core/hub/hub_transport.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/cancel/cancellation_token.h"
#include "core/digest/sha256.h"
#include "core/http/redirect_follower.h"
#include "core/http/url.h"
#include "core/hub/hub_errors.h"

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

Result<std::unique_ptr<HubTransport>> HubTransport::Create(HubClientOptions options,
                                                           HubDialect dialect, const Clock& clock) {
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
  return std::unique_ptr<HubTransport>(new HubTransport(
      std::move(options), dialect, std::move(*http_client), std::move(origin), clock));
}

HubTransport::HubTransport(HubClientOptions options, HubDialect dialect,
                           std::unique_ptr<HttpClient> http, std::string origin, const Clock& clock)
    : options_(std::move(options)),
      dialect_(dialect),
      http_(std::move(http)),
      origin_(std::move(origin)),
      clock_(clock) {}

HubTransport::~HubTransport() = default;

ClientRequest HubTransport::RequestFor(const std::string& url) const {
  ClientRequest request;
  request.url = url;
  request.clock = &clock_;
  const auto parsed = Url::Parse(url);
  if (options_.token && parsed && LowercaseOrigin(*parsed) == origin_) {
    request.headers.set(http::field::authorization, "Bearer " + *options_.token);
    if (dialect_ == HubDialect::kModelScope) {
      request.headers.set(http::field::cookie, "m_session_id=" + *options_.token);
    }
  }
  return request;
}

HubCallContext HubTransport::Context(HubCall call, const std::string& repository,
                                     const std::string& revision, const std::string& path) const {
  return {.dialect = dialect_,
          .call = call,
          .endpoint = options_.endpoint,
          .repository = repository,
          .revision = revision,
          .path = path,
          .token_sent = options_.token.has_value()};
}

template <typename Value>
Result<Value> HubTransport::WithThrottleWaits(const std::function<Result<Value>()>& attempt,
                                              const HubCallContext& context) {
  for (int waits = 0;; ++waits) {
    Result<Value> result = attempt();
    if (result) return result;
    const Error& error = result.error();
    if (!IsThrottlingStatus(error.http_status()) || HubReasonOf(error)) {
      return std::unexpected(RefusalForFailure(error, context));
    }
    if (!error.retry_after()) {
      // The HTTP client already backed off and retried an answer that named no wait; a 503
      // without one reads as the server's trouble rather than a limit.
      if (error.http_status() == 503u) return std::unexpected(RefusalForFailure(error, context));
      return std::unexpected(ThrottledRefusal(error, context, "it named no time to wait"));
    }
    const auto wait =
        std::chrono::ceil<std::chrono::seconds>(*error.retry_after()) + std::chrono::seconds(1);
    if (wait > options_.max_throttle_wait) {
      return std::unexpected(
          ThrottledRefusal(error, context,
                           fmt::format("it asks to wait {} s, longer than the {} s allowed",
                                       wait.count() - 1, options_.max_throttle_wait.count())));
    }
    if (waits >= options_.max_throttle_waits) {
      return std::unexpected(
          ThrottledRefusal(error, context, fmt::format("still throttled after {} waits", waits)));
    }
    if (options_.note) {
      options_.note(fmt::format("the hub asked to slow down (HTTP {}); waiting {} s",
                                *error.http_status(), wait.count()));
    }
    CancellationToken never_cancelled;
    (void)never_cancelled.SleepFor(clock_, wait);
  }
}

Result<ClientResponse> HubTransport::FetchJson(const std::string& url,
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

Status HubTransport::RequireHome(const Url& url, std::string_view what) const {
  return RequireOrigin(url, origin_, what);
}

Result<HubFileContent> HubTransport::ReadFile(const std::string& url, const HubFile& file,
                                              std::size_t keep_limit,
                                              const HubCallContext& context) {
  if (keep_limit > 0 && static_cast<std::uint64_t>(file.size) > keep_limit) {
    return std::unexpected(
        HubRefusal(HubReason::kAnswerTooLarge,
                   fmt::format("{} holds {} bytes, more than the {} this import reads", file.path,
                               file.size, keep_limit)));
  }
  RedirectRules rules;
  if (!file.lfs) {
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
  if (!file.sha256.empty() && content->sha256 != "sha256:" + file.sha256) {
    return std::unexpected(HubRefusal(HubReason::kListingMismatch,
                                      fmt::format("{} hashed to {}; the listing gives sha256:{}",
                                                  file.path, content->sha256, file.sha256)));
  }
  return content;
}

}  // namespace modelplane::core
