// Percent-encoding as AWS Signature Version 4 and S3 define it, and the canonical query string.
//
// S3 encodes every byte except the unreserved set A-Z a-z 0-9 '-' '.' '_' '~' as %XX with
// upper-case hex; '/' is kept in object key paths and encoded everywhere else. Keys are encoded
// once (S3 does not normalise or double-encode paths, unlike the generic SigV4 rules), so the
// path sent on the wire is exactly the canonical URI that is signed.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace modelplane::agent {

// Encodes `text` byte by byte; '/' is kept when `keep_slash` is true.
[[nodiscard]] std::string UriEncode(std::string_view text, bool keep_slash);

// Decodes %XX escapes; nullopt for a malformed escape. '+' stays '+'.
[[nodiscard]] std::optional<std::string> UriDecode(std::string_view text);

// One query parameter, not encoded.
using QueryParameter = std::pair<std::string, std::string>;

// "name=value&..." with names and values encoded, sorted by encoded name then encoded value;
// a parameter with an empty value is written "name=".
[[nodiscard]] std::string CanonicalQueryString(const std::vector<QueryParameter>& parameters);

// The encoded path for an object key below a bucket: "/" + key with each segment encoded.
[[nodiscard]] std::string ObjectKeyPath(std::string_view key);

}  // namespace modelplane::agent
