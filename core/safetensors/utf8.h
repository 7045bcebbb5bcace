// UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace modelplane::core {

// The offset of the first byte that starts an invalid sequence, or nullopt when all is valid.
[[nodiscard]] std::optional<std::size_t> FindInvalidUtf8(std::string_view text);

}  // namespace modelplane::core
