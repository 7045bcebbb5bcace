// UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), shared
// by everything that takes text from untrusted bytes: log lines, Prometheus label values,
// safetensors headers.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace modelplane::core {

// Length (1..4) of the well-formed UTF-8 sequence starting at text[position], or 0 if the bytes
// there are not one: truncated, overlong, a UTF-16 surrogate, past U+10FFFF or a stray byte.
[[nodiscard]] std::size_t Utf8SequenceLength(std::string_view text, std::size_t position);

[[nodiscard]] bool IsValidUtf8(std::string_view text);

// The offset of the first byte that starts an invalid sequence, or nullopt when all is valid.
[[nodiscard]] std::optional<std::size_t> FindInvalidUtf8(std::string_view text);

}  // namespace modelplane::core
