// Percent-encoding (RFC 3986) as S3, AWS Signature Version 4 and the Kubernetes API's query
// parameters need it: the one codec for object keys, canonical query strings and selectors.
//
// Every byte outside the unreserved set A-Z a-z 0-9 '-' '.' '_' '~' becomes %XX with upper-case
// hex; '/' is kept only where asked (object key paths). Text is encoded once: S3 does not
// normalise or double-encode paths, so what is sent is exactly what is signed.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace modelplane::core {

// Encodes `text` byte by byte; '/' is kept when `keep_slash` is true.
[[nodiscard]] std::string PercentEncode(std::string_view text, bool keep_slash = false);

// Decodes %XX escapes (either case); nullopt for a malformed or truncated escape. '+' stays '+'.
[[nodiscard]] std::optional<std::string> PercentDecode(std::string_view text);

}  // namespace modelplane::core
