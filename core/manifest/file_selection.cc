#include "core/manifest/file_selection.h"

#include <algorithm>

#include <fnmatch.h>

namespace modelplane::core {
namespace {

std::vector<std::string> FolderPatternsExpanded(std::vector<std::string> patterns) {
  for (std::string& pattern : patterns) {
    if (pattern.ends_with('/')) pattern += '*';
  }
  return patterns;
}

bool MatchesAny(const std::vector<std::string>& patterns, const std::string& path) {
  return std::ranges::any_of(patterns, [&path](const std::string& pattern) {
    return ::fnmatch(pattern.c_str(), path.c_str(), 0) == 0;
  });
}

}  // namespace

FileSelection::FileSelection(std::vector<std::string> includes, std::vector<std::string> excludes)
    : includes_(FolderPatternsExpanded(std::move(includes))),
      excludes_(FolderPatternsExpanded(std::move(excludes))) {}

bool FileSelection::Chooses(std::string_view path) const {
  const std::string text(path);  // fnmatch wants a terminated string
  if (!includes_.empty() && !MatchesAny(includes_, text)) return false;
  return !MatchesAny(excludes_, text);
}

}  // namespace modelplane::core
