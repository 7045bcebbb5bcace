// The grammar of every source field that ends up in a URL or a host name: an object store's
// endpoint, region, bucket and prefix, an HTTP origin's base URL. The validator applies it at
// admission (the revision webhook), in the operator and again in the agent before a source is
// built (node-agent/revision/loaded_revision.h), so that no field a revision's author writes can
// steer a request to a host, port or path the field does not plainly name: a region holding
// ':' or '#' would otherwise choose the host and port of s3.<region>.amazonaws.com.
//
// Each check returns an empty string when the value is acceptable, otherwise what is wrong, as
// CheckRelativePath does.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace modelplane::core::api {

// "http(s)://host[:port]" with an optional trailing '/': a DNS name (letters, digits, '-'
// between dots, at most 253), a dotted IPv4 address or a bracketed IPv6 literal, and a port of
// 1-65535. No user-info, path, query or fragment.
[[nodiscard]] std::string CheckEndpointUrl(std::string_view url);

// "http(s)://host[:port][/path]": the endpoint's grammar plus a path of printable ASCII without
// spaces, backslashes, '?', '#' or '.' and '..' segments.
[[nodiscard]] std::string CheckBaseUrl(std::string_view url);

// A DNS label as cloud regions are (us-east-1, auto): lower-case letters, digits and '-', at
// most 63, starting and ending with a letter or digit.
[[nodiscard]] std::string CheckRegion(std::string_view region);

// S3's bucket rules: 3-63 lower-case letters, digits, '.' and '-', starting and ending with a
// letter or digit, no "..", not shaped like an IPv4 address.
[[nodiscard]] std::string CheckBucket(std::string_view bucket);

// An object key prefix: empty, or '/'-separated segments of printable ASCII without
// backslashes, spaces, '?' or '#', no empty, "." or ".." segment except a trailing '/'.
[[nodiscard]] std::string CheckObjectPrefix(std::string_view prefix);

}  // namespace modelplane::core::api
