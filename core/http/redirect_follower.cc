#include "core/http/redirect_follower.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace modelplane::core {
namespace {

namespace http = boost::beast::http;

std::string Lowercase(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Prepares `request` for the hop to `target`; an error when the rules refuse it.
Status PrepareHop(ClientRequest& request, unsigned status, const std::string& target,
                  const RedirectRules& rules, std::string_view home_origin, bool& left_home) {
  auto parsed = Url::Parse(target);
  if (!parsed) return std::unexpected(parsed.error().Wrap("redirect target"));
  if (rules.allow) {
    if (auto allowed = rules.allow(*parsed); !allowed) return allowed;
  }
  left_home = left_home || Lowercase(parsed->Origin()) != home_origin;
  if (left_home) {
    for (const std::string& name : rules.home_only_headers) request.headers.erase(name);
  }
  if (status == 303 && request.method != http::verb::head) {
    request.method = http::verb::get;
    request.body.clear();
  }
  request.url = target;
  return Ok();
}

// The loop both calls share: `fetch` makes one request with redirects as answers.
template <typename Response, typename Fetch>
Result<std::pair<Response, std::string>> Follow(ClientRequest request, const RedirectRules& rules,
                                                const Fetch& fetch) {
  request.redirects_as_answers = true;
  auto home = Url::Parse(request.url);
  if (!home) return std::unexpected(home.error());
  const std::string home_origin = Lowercase(home->Origin());
  bool left_home = false;
  for (std::size_t hops = 0;; ++hops) {
    auto response = fetch(request);
    if (!response) return std::unexpected(response.error());
    if (!IsRedirectStatus(response->status)) {
      return std::pair<Response, std::string>{std::move(*response), request.url};
    }
    if (hops >= rules.max_redirects) {
      return MakeError(ErrorCode::kUnavailable, fmt::format("{} redirected more than {} times",
                                                            request.url, rules.max_redirects));
    }
    const auto location = response->headers.find(http::field::location);
    if (location == response->headers.end() || location->value().empty()) {
      return MakeError(
          ErrorCode::kUnavailable,
          fmt::format("{} answered HTTP {} without a Location", request.url, response->status));
    }
    auto target = ResolveLocation(
        request.url, std::string_view(location->value().data(), location->value().size()));
    if (!target) return std::unexpected(target.error());
    if (auto prepared =
            PrepareHop(request, response->status, *target, rules, home_origin, left_home);
        !prepared) {
      return std::unexpected(prepared.error());
    }
  }
}

}  // namespace

Result<std::string> ResolveLocation(std::string_view from_url, std::string_view location) {
  if (location.find_first_of("\r\n") != std::string_view::npos) {
    return MakeError(ErrorCode::kInvalidArgument, "a Location with a line break");
  }
  if (location.starts_with("http://") || location.starts_with("https://")) {
    return std::string(location);
  }
  if (location.find("://") != std::string_view::npos) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("redirect to a scheme other than http(s): {}", location));
  }
  auto base = Url::Parse(from_url);
  if (!base) return std::unexpected(base.error());
  const std::string scheme = base->tls ? "https:" : "http:";
  if (location.starts_with("//")) return scheme + std::string(location);
  if (location.starts_with('/')) return base->Origin() + std::string(location);
  std::string_view folder = base->target;
  folder = folder.substr(0, folder.find('?'));
  folder = folder.substr(0, folder.rfind('/') + 1);
  return base->Origin() + std::string(folder) + std::string(location);
}

Result<FollowedStream> FetchStreamFollowing(HttpClient& client, ClientRequest request,
                                            const BodySink& sink, std::span<std::byte> landing,
                                            const RedirectRules& rules) {
  auto followed = Follow<StreamResponse>(std::move(request), rules, [&](const ClientRequest& hop) {
    return client.FetchStream(hop, sink, landing);
  });
  if (!followed) return std::unexpected(followed.error());
  return FollowedStream{std::move(followed->first), std::move(followed->second)};
}

Result<FollowedFetch> FetchFollowing(HttpClient& client, ClientRequest request,
                                     std::size_t body_limit, const RedirectRules& rules) {
  auto followed = Follow<ClientResponse>(std::move(request), rules, [&](const ClientRequest& hop) {
    return client.Fetch(hop, body_limit);
  });
  if (!followed) return std::unexpected(followed.error());
  return FollowedFetch{std::move(followed->first), std::move(followed->second)};
}

}  // namespace modelplane::core
