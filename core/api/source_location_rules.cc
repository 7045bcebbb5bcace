#include "core/api/source_location_rules.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace modelplane::core::api {
namespace {

bool IsLowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool IsAlnum(char c) {
  return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z');
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
bool IsHex(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool IsDnsName(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  std::size_t start = 0;
  while (start <= host.size()) {
    const std::size_t dot = std::min(host.find('.', start), host.size());
    const std::string_view label = host.substr(start, dot - start);
    if (label.empty() || label.size() > 63 || !IsAlnum(label.front()) || !IsAlnum(label.back()) ||
        !std::all_of(label.begin(), label.end(), [](char c) { return IsAlnum(c) || c == '-'; })) {
      return false;
    }
    start = dot + 1;
  }
  return true;
}

bool IsIpv4(std::string_view host) {
  int parts = 0;
  std::size_t start = 0;
  while (start <= host.size()) {
    const std::size_t dot = std::min(host.find('.', start), host.size());
    const std::string_view part = host.substr(start, dot - start);
    unsigned value = 0;
    auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || part.size() > 3 || error != std::errc() ||
        end != part.data() + part.size() || value > 255) {
      return false;
    }
    ++parts;
    start = dot + 1;
  }
  return parts == 4;
}

bool IsIpv6Literal(std::string_view inside) {
  return !inside.empty() && inside.size() <= 45 && inside.find(':') != std::string_view::npos &&
         std::all_of(inside.begin(), inside.end(),
                     [](char c) { return IsHex(c) || c == ':' || c == '.'; });
}

// Checks "http(s)://host[:port]" and returns the rest (the path, possibly empty), or a problem.
struct Authority {
  std::string problem;
  std::string_view path;
};

Authority CheckSchemeAndAuthority(std::string_view url) {
  std::string_view rest;
  if (url.starts_with("https://")) {
    rest = url.substr(8);
  } else if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else {
    return {.problem = "must start with http:// or https://"};
  }
  const std::size_t authority_end = std::min(rest.find('/'), rest.size());
  const std::string_view authority = rest.substr(0, authority_end);
  const std::string_view path = rest.substr(authority_end);
  if (authority.find_first_of("@?#\\ ") != std::string_view::npos) {
    return {.problem = "must name a host and port only (no user-info, query or fragment)"};
  }
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with('[')) {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos || !IsIpv6Literal(authority.substr(1, close - 1))) {
      return {.problem = "has a malformed IPv6 host"};
    }
    host = authority.substr(0, close + 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return {.problem = "has characters after its IPv6 host"};
      port = after.substr(1);
      if (port.empty()) return {.problem = "has an empty port"};
    }
  } else {
    if (const std::size_t colon = authority.find(':'); colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
      if (port.empty()) return {.problem = "has an empty port"};
    }
    if (!IsIpv4(host) && !IsDnsName(host)) {
      return {.problem = "must name a DNS host name or an IP address"};
    }
  }
  if (!port.empty()) {
    unsigned value = 0;
    auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (error != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535 ||
        port.size() > 5) {
      return {.problem = "has a port that is not 1-65535"};
    }
  }
  return {.path = path};
}

// Segments of printable ASCII without space, backslash, '?' or '#'; no "." or ".." segment; an
// empty segment only at the end (a trailing '/').
std::string CheckUrlPath(std::string_view path, std::string_view what) {
  for (char c : path) {
    if (c <= ' ' || c >= 0x7f || c == '\\' || c == '?' || c == '#') {
      return fmt::format("{} may hold only printable ASCII without spaces, '\\\\', '?' or '#'",
                         what);
    }
  }
  std::size_t start = 0;
  while (start < path.size()) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    const std::string_view segment = path.substr(start, slash - start);
    if (segment == "." || segment == "..") {
      return fmt::format("{} may not hold '.' or '..' segments", what);
    }
    if (segment.empty() && slash != path.size() - 1 && slash != path.size()) {
      return fmt::format("{} may not hold empty segments ('//')", what);
    }
    start = slash + 1;
  }
  return {};
}

}  // namespace

std::string CheckEndpointUrl(std::string_view url) {
  const Authority authority = CheckSchemeAndAuthority(url);
  if (!authority.problem.empty()) return authority.problem;
  if (!authority.path.empty() && authority.path != "/") {
    return "must be http(s)://host[:port] without a path (the bucket and keys are added to it)";
  }
  return {};
}

std::string CheckBaseUrl(std::string_view url) {
  const Authority authority = CheckSchemeAndAuthority(url);
  if (!authority.problem.empty()) return authority.problem;
  if (authority.path.empty()) return {};
  return CheckUrlPath(authority.path.substr(1), "its path");
}

std::string CheckRegion(std::string_view region) {
  if (region.empty() || region.size() > 63 || !IsLowerAlnum(region.front()) ||
      !IsLowerAlnum(region.back()) || !std::all_of(region.begin(), region.end(), [](char c) {
        return IsLowerAlnum(c) || c == '-';
      })) {
    return "must be a region name: lower-case letters, digits and '-', at most 63 (us-east-1)";
  }
  return {};
}

std::string CheckBucket(std::string_view bucket) {
  if (bucket.size() < 3 || bucket.size() > 63 || !IsLowerAlnum(bucket.front()) ||
      !IsLowerAlnum(bucket.back()) || !std::all_of(bucket.begin(), bucket.end(), [](char c) {
        return IsLowerAlnum(c) || c == '.' || c == '-';
      })) {
    return "must be an S3 bucket name: 3-63 lower-case letters, digits, '.' and '-', starting "
           "and ending with a letter or digit";
  }
  if (bucket.find("..") != std::string_view::npos) return "may not hold '..'";
  if (IsIpv4(bucket)) return "may not be shaped like an IP address";
  return {};
}

std::string CheckObjectPrefix(std::string_view prefix) {
  if (prefix.empty()) return {};
  if (prefix.front() == '/') return "must not start with '/' (keys are relative to the bucket)";
  return CheckUrlPath(prefix, "a prefix");
}

}  // namespace modelplane::core::api
