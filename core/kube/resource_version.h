// Ordering two resourceVersions of one resource type. Kubernetes 1.35 made them comparable
// (KEP-5504, stable): a resourceVersion is a decimal integer without leading zeros, and the
// larger one is the later write. Servers before that may hand out any opaque string, so a
// version that is not of that form compares as unknown and the caller keeps its older rule.
// Thread safety: a pure function.
#pragma once

#include <compare>
#include <optional>
#include <string_view>

namespace modelplane::core {

// nullopt when either version is not a decimal integer without leading zeros.
[[nodiscard]] std::optional<std::strong_ordering> CompareResourceVersions(std::string_view a,
                                                                          std::string_view b);

}  // namespace modelplane::core
