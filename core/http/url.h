// The parts of an http:// or https:// URL the client needs: scheme, host, port and target.
//
// Deliberately small: no user-info (credentials never travel in URLs), no fragments, no
// percent-decoding (the target is sent as given). Thread safety: a plain value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/error/error.h"

namespace modelplane::core {

struct Url {
  bool tls = false;  // https
  std::string host;  // without brackets for IPv6 literals
  std::uint16_t port = 0;
  std::string target;  // path and query, at least "/"

  [[nodiscard]] static Result<Url> Parse(std::string_view text);
  // The Host header value: "host", "host:port" or "[v6]:port".
  [[nodiscard]] std::string HostHeader() const;
  // Identifies the connection pool: "https://host:port".
  [[nodiscard]] std::string Origin() const;
};

}  // namespace modelplane::core
