#include "node-agent/sources/uri_encoding.h"

#include <algorithm>

#include "core/text/percent_encoding.h"

namespace modelplane::agent {
std::string CanonicalQueryString(const std::vector<QueryParameter>& parameters) {
  std::vector<QueryParameter> encoded;
  encoded.reserve(parameters.size());
  for (const auto& [name, value] : parameters) {
    encoded.emplace_back(core::PercentEncode(name, false), core::PercentEncode(value, false));
  }
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [name, value] : encoded) {
    if (!out.empty()) out.push_back('&');
    out += name;
    out.push_back('=');
    out += value;
  }
  return out;
}

std::string ObjectKeyPath(std::string_view key) {
  return "/" + core::PercentEncode(key, true);
}

}  // namespace modelplane::agent
