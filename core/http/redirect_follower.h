// Following HTTP redirects under the caller's rules, for clients that must: a hub's `resolve`
// answers 302 to a signed CDN URL, or 307 to a same-origin cache path. The HTTP client itself
// never follows (http_client.h); a caller that does states where a hop may go and which headers
// stay with the origin that was asked first, as the Hugging Face client keeps its token home.
//
// Every hop is checked by `allow` before it is requested; a refusal ends the call with its
// error. Headers named in `home_only_headers` are sent only while the request is still at the
// first request's origin (scheme, host and port) and never again once a hop has left it. A 303
// turns the request into a GET without a body; 301, 302, 307 and 308 repeat it as it was (Range
// included). Thread safety: pure functions over the client, which is thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"
#include "core/http/http_client.h"
#include "core/http/url.h"

namespace modelplane::core {

struct RedirectRules {
  std::size_t max_redirects = 5;
  // Ok when the request may go to `target`; its error otherwise. Null: any http(s) URL.
  std::function<Status(const Url& target)> allow;
  std::vector<std::string> home_only_headers = {"authorization", "cookie"};
};

// The absolute URL a Location header names: as is when absolute, else resolved against the URL
// it answered ("//host/p", "/p", or a path relative to the answering URL's folder).
[[nodiscard]] Result<std::string> ResolveLocation(std::string_view from_url,
                                                  std::string_view location);

struct FollowedStream {
  StreamResponse response;
  std::string final_url;  // the URL that answered with the body
};

struct FollowedFetch {
  ClientResponse response;
  std::string final_url;
};

// FetchStream through at most rules.max_redirects redirects (kUnavailable beyond them).
[[nodiscard]] Result<FollowedStream> FetchStreamFollowing(HttpClient& client, ClientRequest request,
                                                          const BodySink& sink,
                                                          std::span<std::byte> landing,
                                                          const RedirectRules& rules);

// Fetch (a buffered body of at most `body_limit` bytes) through redirects the same way.
[[nodiscard]] Result<FollowedFetch> FetchFollowing(HttpClient& client, ClientRequest request,
                                                   std::size_t body_limit,
                                                   const RedirectRules& rules);

}  // namespace modelplane::core
