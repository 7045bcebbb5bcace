// Loading YAML configuration text into a yaml-cpp node tree, safely: bounded size and nesting,
// exactly one document, and every failure reported as "<source>:<line>:<column>: ..." instead of
// an exception.
//
// yaml-cpp's parser is recursive, so nesting is checked before the tree is built: a first pass
// feeds the parser's events to a handler that stops at the first collection nested deeper than
// the limit, which keeps the parser's recursion bounded by that limit too. Only then does the
// second pass build the tree. Files are read with a size cap before anything is parsed.
//
// Thread safety: pure functions; the returned document is a value (yaml-cpp nodes are not safe
// to share between threads while being read, so each thread should load its own).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "core/error/error.h"

namespace modelplane::core {

struct YamlLimits {
  std::size_t max_bytes = 1 << 20;  // 1 MiB: configuration, not data
  int max_depth = 64;               // nested sequences and maps, the root counting as 1
};

struct YamlDocument {
  std::string source_name;  // the file path, or a caller-chosen name; used in every error
  YAML::Node root;          // Null for an empty document
};

[[nodiscard]] Result<YamlDocument> LoadYamlString(std::string_view text,
                                                  std::string source_name = "<string>",
                                                  const YamlLimits& limits = {});

// Errors: kNotFound when the file does not exist, kIo when it cannot be read, kInvalidArgument
// for everything about its content (including size and depth).
[[nodiscard]] Result<YamlDocument> LoadYamlFile(const std::string& path,
                                                const YamlLimits& limits = {});

}  // namespace modelplane::core
