// The canonical query string of AWS Signature Version 4 and S3's object key paths, both built
// on core::PercentEncode ('/' kept in key paths, encoded everywhere else).
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace modelplane::agent {

// One query parameter, not encoded.
using QueryParameter = std::pair<std::string, std::string>;

// "name=value&..." with names and values encoded, sorted by encoded name then encoded value;
// a parameter with an empty value is written "name=".
[[nodiscard]] std::string CanonicalQueryString(const std::vector<QueryParameter>& parameters);

// The encoded path for an object key below a bucket: "/" + key with each segment encoded.
[[nodiscard]] std::string ObjectKeyPath(std::string_view key);

}  // namespace modelplane::agent
