#include "node-agent/sources/hub_range_source.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/api/model_revision.h"
#include "core/http/redirect_follower.h"
#include "core/http/url.h"
#include "core/policy/source_policy.h"
#include "core/text/percent_encoding.h"
#include "node-agent/sources/http_range_reader.h"

namespace modelplane::agent {
namespace {

using core::ErrorCode;

std::string LowerText(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Whether an answer from a remembered redirect target means "ask the hub for a new one": the
// signed URL expired or was withdrawn.
bool IsStaleRedirectAnswer(const core::Error& error) {
  const auto status = error.http_status();
  return status == 401u || status == 403u || status == 404u || status == 410u;
}

}  // namespace

core::Result<std::unique_ptr<HubRangeSource>> HubRangeSource::Create(
    std::shared_ptr<core::HttpClient> client, HubRangeSourceOptions options) {
  if (!client) return core::MakeError(ErrorCode::kInvalidArgument, "no HTTP client");
  if (options.type != core::api::kSourceHuggingFace &&
      options.type != core::api::kSourceModelScope) {
    return core::MakeError(ErrorCode::kInvalidArgument,
                           fmt::format("\"{}\" is not a hub source type", options.type));
  }
  while (!options.endpoint.empty() && options.endpoint.back() == '/') options.endpoint.pop_back();
  auto endpoint = core::Url::Parse(options.endpoint);
  if (!endpoint) return std::unexpected(endpoint.error().Wrap("hub endpoint"));
  if (endpoint->target != "/") {
    return core::MakeError(ErrorCode::kInvalidArgument,
                           fmt::format("hub endpoint {} must not carry a path", options.endpoint));
  }
  if (options.repository.empty() || options.commit.empty()) {
    return core::MakeError(ErrorCode::kInvalidArgument, "a hub source needs repository and commit");
  }
  for (std::string& host : options.redirect_hosts) host = LowerText(host);
  if (options.max_concurrency == 0) options.max_concurrency = 1;
  if (!options.clock) options.clock = std::make_shared<core::SystemClock>();
  if (!options.redirects) options.redirects = std::make_shared<HubRedirectMemory>();
  std::string home_origin = LowerText(endpoint->Origin());
  return std::unique_ptr<HubRangeSource>(
      new HubRangeSource(std::move(client), std::move(options), std::move(home_origin)));
}

HubRangeSource::HubRangeSource(std::shared_ptr<core::HttpClient> client,
                               HubRangeSourceOptions options, std::string home_origin)
    : client_(std::move(client)),
      options_(std::move(options)),
      name_(fmt::format("{}/{}", core::api::kTierHub, options_.name)),
      home_origin_(std::move(home_origin)) {}

std::string_view HubRangeSource::tier() const {
  return core::api::kTierHub;
}

std::string HubRangeSource::ResolveUrl(std::string_view path) const {
  if (options_.type == core::api::kSourceModelScope) {
    return fmt::format("{}/api/v1/models/{}/repo?Revision={}&FilePath={}", options_.endpoint,
                       options_.repository, options_.commit, core::PercentEncode(path, false));
  }
  return fmt::format("{}/{}/resolve/{}/{}", options_.endpoint, options_.repository, options_.commit,
                     core::PercentEncode(path, true));
}

core::Status HubRangeSource::ReadRange(const SourceFile& file, std::uint64_t offset,
                                       std::span<std::byte> destination,
                                       const ReadContext& context) {
  const std::string key = MemoryKey(file.path);
  if (auto remembered = options_.redirects->Find(key, options_.clock->Now())) {
    auto read = ReadOnce(file, offset, destination, context, *remembered, false);
    if (read || !IsStaleRedirectAnswer(read.error())) return read;
    options_.redirects->Forget(key);
  }
  auto read = ReadOnce(file, offset, destination, context, ResolveUrl(file.path), false);
  if (!read && options_.token && read.error().http_status() == 401u) {
    // The Secret may have been rotated since the token was read.
    read = ReadOnce(file, offset, destination, context, ResolveUrl(file.path), true);
  }
  return read;
}

core::Status HubRangeSource::ReadOnce(const SourceFile& file, std::uint64_t offset,
                                      std::span<std::byte> destination, const ReadContext& context,
                                      const std::string& url, bool fresh_token) {
  core::ClientRequest request;
  request.url = url;
  auto parsed = core::Url::Parse(url);
  if (!parsed) return std::unexpected(parsed.error());
  if (options_.token && LowerText(parsed->Origin()) == home_origin_) {
    auto token = options_.token(fresh_token);
    if (!token) return std::unexpected(token.error().Wrap(fmt::format("{} token", name_)));
    request.headers.set(boost::beast::http::field::authorization, "Bearer " + *token);
  }
  core::RedirectRules rules;
  rules.allow = [this, home_tls = parsed->tls](const core::Url& target) -> core::Status {
    if (LowerText(target.Origin()) == home_origin_) return core::Ok();
    if (core::HostMatches(LowerText(target.host), options_.redirect_hosts) &&
        (target.tls || !home_tls)) {
      return core::Ok();
    }
    return std::unexpected(core::Error(
        ErrorCode::kPermissionDenied,
        fmt::format("{} redirected to {}://{}, which the source policy does not allow for this "
                    "hub (hubs[].redirectHosts)",
                    name_, target.tls ? "https" : "http", target.host),
        false));
  };
  std::string final_url;
  const StreamFetch fetch =
      [&](const core::ClientRequest& one, const core::BodySink& sink,
          std::span<std::byte> landing) -> core::Result<core::StreamResponse> {
    auto followed = core::FetchStreamFollowing(*client_, one, sink, landing, rules);
    if (!followed) return std::unexpected(followed.error());
    final_url = std::move(followed->final_url);
    return std::move(followed->response);
  };
  const auto map_error = [&](const core::Error& error) {
    return OriginHttpError(name_, file.path, error);
  };
  auto read = ReadHttpRangeWith(fetch, std::move(request), offset, destination, context,
                                options_.read_timeout, map_error);
  if (read && !final_url.empty() && final_url != url) {
    options_.redirects->Remember(MemoryKey(file.path), std::move(final_url), options_.clock->Now(),
                                 options_.redirect_ttl);
  }
  return read;
}

std::string HubRangeSource::MemoryKey(std::string_view path) const {
  return fmt::format("{}\n{}", options_.credential_scope, ResolveUrl(path));
}

}  // namespace modelplane::agent
