#include "core/kube/resource_version.h"

#include <algorithm>

namespace modelplane::core {
namespace {

bool Comparable(std::string_view version) {
  if (version.empty() || version.front() == '0') return false;
  return std::ranges::all_of(version, [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::optional<std::strong_ordering> CompareResourceVersions(std::string_view a,
                                                            std::string_view b) {
  if (!Comparable(a) || !Comparable(b)) return std::nullopt;
  // Digits only and no leading zeros: the longer number is the larger, and numbers of one
  // length order as their text does. No parse, so no overflow however long they grow.
  if (a.size() != b.size()) return a.size() <=> b.size();
  return a.compare(b) <=> 0;
}

}  // namespace modelplane::core
