// UTF-8 validation, shared by everything that must emit valid UTF-8 from untrusted bytes: JSON
// log lines and Prometheus label values.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string_view>

namespace modelplane::core {

// Length (1..4) of the well-formed UTF-8 sequence starting at text[position], or 0 if the bytes
// there are not one: truncated, overlong, a UTF-16 surrogate, past U+10FFFF or a stray byte.
[[nodiscard]] std::size_t Utf8SequenceLength(std::string_view text, std::size_t position);

[[nodiscard]] bool IsValidUtf8(std::string_view text);

}  // namespace modelplane::core
