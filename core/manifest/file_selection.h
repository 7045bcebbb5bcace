// Which files of a repository go into a revision, by fnmatch-style patterns (huggingface_hub's
// allow_patterns / ignore_patterns): pick one quantization of several, leave out a format.
//
// A path is chosen when it matches at least one include pattern (or there are none) and no
// exclude pattern. Patterns are fnmatch(3) globs without FNM_PATHNAME, as Python's fnmatch: '*'
// also matches '/', so "*.safetensors" matches "sub/model.safetensors". A pattern ending in '/'
// means everything under that folder ("q4/" is "q4/*").
// Thread safety: a value; Chooses is const.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace modelplane::core {

class FileSelection {
 public:
  FileSelection(std::vector<std::string> includes, std::vector<std::string> excludes);

  [[nodiscard]] bool Chooses(std::string_view path) const;

 private:
  std::vector<std::string> includes_;
  std::vector<std::string> excludes_;
};

}  // namespace modelplane::core
