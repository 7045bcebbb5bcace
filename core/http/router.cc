#include "core/http/router.h"

#include <algorithm>

namespace modelplane::core {

namespace http = boost::beast::http;

void Router::Handle(http::verb method, std::string path, HttpHandler handler) {
  routes_.push_back({method, std::move(path), false, std::move(handler)});
}

void Router::HandlePrefix(http::verb method, std::string prefix, HttpHandler handler) {
  routes_.push_back({method, std::move(prefix), true, std::move(handler)});
}

Router::Match Router::Find(http::verb method, std::string_view path) const {
  // The best pattern first: an exact match, else the longest matching prefix.
  const Route* best = nullptr;
  for (const Route& route : routes_) {
    const bool matches = route.prefix ? path.starts_with(route.path) : path == route.path;
    if (!matches) continue;
    if (best == nullptr || (best->prefix && !route.prefix) ||
        (best->prefix == route.prefix && route.path.size() > best->path.size())) {
      best = &route;
    }
  }
  Match match;
  if (best == nullptr) return match;

  // Every route with the same pattern is a candidate for the method.
  const HttpHandler* get_handler = nullptr;
  std::vector<http::verb> allowed;
  for (const Route& route : routes_) {
    if (route.prefix != best->prefix || route.path != best->path) continue;
    if (route.method == method) {
      match.kind = Match::Kind::kFound;
      match.handler = &route.handler;
      return match;
    }
    if (route.method == http::verb::get) get_handler = &route.handler;
    allowed.push_back(route.method);
  }
  if (method == http::verb::head && get_handler != nullptr) {
    match.kind = Match::Kind::kFound;
    match.handler = get_handler;
    return match;
  }
  if (std::find(allowed.begin(), allowed.end(), http::verb::get) != allowed.end() &&
      std::find(allowed.begin(), allowed.end(), http::verb::head) == allowed.end()) {
    allowed.push_back(http::verb::head);
  }
  match.kind = Match::Kind::kMethodNotAllowed;
  for (http::verb verb : allowed) {
    if (!match.allow.empty()) match.allow += ", ";
    match.allow += std::string(http::to_string(verb));
  }
  return match;
}

}  // namespace modelplane::core
