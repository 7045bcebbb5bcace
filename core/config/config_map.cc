#include "core/config/config_map.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace modelplane::core {

ConfigMap::ConfigMap(ConfigContext& context, const YAML::Node& node, std::string path,
                     YAML::Mark mark)
    : context_(context), path_(std::move(path)), mark_(mark) {
  if (node.IsNull() || !node.IsDefined()) return;
  if (!node.IsMap()) {
    context_.Fail(mark_, path_, fmt::format("expected a map, got {}", DescribeYamlValue(node)));
    return;
  }
  for (const auto& pair : node) {
    const YAML::Node key = pair.first;
    if (!key.IsScalar()) {
      context_.Fail(key.Mark(), path_, "map keys must be plain strings");
      return;
    }
    for (const Entry& existing : entries_) {
      if (existing.key == key.Scalar()) {
        context_.Fail(
            key.Mark(), ChildPath(key.Scalar()),
            fmt::format("duplicate field (first set on line {})", existing.key_mark.line + 1));
        return;
      }
    }
    entries_.push_back({.key = key.Scalar(), .value = pair.second, .key_mark = key.Mark()});
  }
}

ConfigMap::Entry* ConfigMap::Find(std::string_view key) {
  for (Entry& entry : entries_) {
    if (entry.key == key) {
      entry.used = true;
      return &entry;
    }
  }
  return nullptr;
}

std::string ConfigMap::ChildPath(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  return fmt::format("{}.{}", path_, key);
}

void ConfigMap::RejectUnknownKeys() {
  for (const Entry& entry : entries_) {
    if (entry.used) continue;
    if (requested_.empty()) {
      context_.Fail(entry.key_mark, ChildPath(entry.key), "unknown field; this map takes none");
    } else {
      context_.Fail(entry.key_mark, ChildPath(entry.key),
                    fmt::format("unknown field; expected one of {}", fmt::join(requested_, ", ")));
    }
    return;
  }
}

}  // namespace modelplane::core
