#include "core/http/url.h"

#include <charconv>

#include <fmt/format.h>

namespace modelplane::core {

Result<Url> Url::Parse(std::string_view text) {
  Url url;
  std::string_view rest;
  if (text.starts_with("http://")) {
    rest = text.substr(7);
  } else if (text.starts_with("https://")) {
    url.tls = true;
    rest = text.substr(8);
  } else {
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("not an http(s) URL: {}", text));
  }
  const std::size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view target =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (const std::size_t hash = target.find('#'); hash != std::string_view::npos) {
    target = target.substr(0, hash);
  }
  if (authority.find('@') != std::string_view::npos) {
    return MakeError(ErrorCode::kInvalidArgument, "credentials in URLs are not accepted");
  }
  std::string_view port_text;
  if (authority.starts_with('[')) {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return MakeError(ErrorCode::kInvalidArgument, fmt::format("bad IPv6 host in {}", text));
    }
    url.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return MakeError(ErrorCode::kInvalidArgument, fmt::format("bad authority in {}", text));
      }
      port_text = after.substr(1);
    }
  } else {
    const std::size_t colon = authority.rfind(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (url.host.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("no host in {}", text));
  }
  url.port = url.tls ? 443 : 80;
  if (!port_text.empty()) {
    unsigned value = 0;
    auto [end, error] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (error != std::errc() || end != port_text.data() + port_text.size() || value == 0 ||
        value > 65535) {
      return MakeError(ErrorCode::kInvalidArgument, fmt::format("bad port in {}", text));
    }
    url.port = static_cast<std::uint16_t>(value);
  }
  url.target = target.empty() ? "/" : std::string(target);
  if (url.target.front() == '?') url.target = fmt::format("/{}", url.target);
  return url;
}

std::string Url::HostHeader() const {
  const bool v6 = host.find(':') != std::string::npos;
  std::string name = v6 ? fmt::format("[{}]", host) : host;
  if (port == (tls ? 443 : 80)) return name;
  return fmt::format("{}:{}", name, port);
}

std::string Url::Origin() const {
  const bool v6 = host.find(':') != std::string::npos;
  return fmt::format("{}://{}:{}", tls ? "https" : "http", v6 ? fmt::format("[{}]", host) : host,
                     port);
}

}  // namespace modelplane::core
