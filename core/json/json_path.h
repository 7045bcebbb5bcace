// Builds the JSON paths that name a field in error messages, e.g. spec.files[3].sha256.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace modelplane::core {

// "parent.key", or "parent[\"key\"]" when the key is not a plain identifier (label keys).
[[nodiscard]] std::string JsonPathChild(std::string_view parent, std::string_view key);

// "parent[index]".
[[nodiscard]] std::string JsonPathIndex(std::string_view parent, std::size_t index);

// The path for messages: "<root>" when empty.
[[nodiscard]] std::string_view JsonPathForDisplay(std::string_view path);

}  // namespace modelplane::core
