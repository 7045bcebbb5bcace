// Maps (method, exact path or path prefix) to a handler, and tells 404 from 405 apart.
//
// Exact paths win over prefixes; among prefixes the longest wins. A HEAD request falls back to
// the GET handler (the server then sends the headers only). The router is filled before the
// server starts and only read afterwards, so concurrent Find calls are safe; Handle and
// HandlePrefix are not thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/beast/http/verb.hpp>

#include "core/http/server_request.h"
#include "core/http/server_response.h"

namespace modelplane::core {

// Handlers run on the server's io threads: a handler that blocks holds a thread, so servers
// with slow handlers need more threads. An exception escaping a handler becomes a 500.
using HttpHandler = std::function<ServerResponse(const ServerRequest&)>;

class Router {
 public:
  void Handle(boost::beast::http::verb method, std::string path, HttpHandler handler);
  void HandlePrefix(boost::beast::http::verb method, std::string prefix, HttpHandler handler);

  struct Match {
    enum class Kind { kFound, kMethodNotAllowed, kNotFound };
    Kind kind = Kind::kNotFound;
    const HttpHandler* handler = nullptr;  // set for kFound
    std::string allow;                     // set for kMethodNotAllowed, e.g. "GET, HEAD"
  };
  [[nodiscard]] Match Find(boost::beast::http::verb method, std::string_view path) const;

 private:
  struct Route {
    boost::beast::http::verb method;
    std::string path;
    bool prefix;
    HttpHandler handler;
  };
  std::vector<Route> routes_;
};

}  // namespace modelplane::core
