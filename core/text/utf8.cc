#include "core/text/utf8.h"

#include <cstdint>

namespace modelplane::core {

std::size_t Utf8SequenceLength(std::string_view text, std::size_t position) {
  if (position >= text.size()) return 0;
  const auto lead = static_cast<std::uint8_t>(text[position]);
  std::size_t length = 0;
  std::uint32_t code_point = 0;
  if (lead < 0x80) {
    return 1;
  } else if ((lead & 0xE0) == 0xC0) {
    length = 2;
    code_point = lead & 0x1Fu;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    code_point = lead & 0x0Fu;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    code_point = lead & 0x07u;
  } else {
    return 0;
  }
  if (position + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const auto continuation = static_cast<std::uint8_t>(text[position + k]);
    if ((continuation & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (continuation & 0x3Fu);
  }
  constexpr std::uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code_point < kMinimum[length]) return 0;  // overlong
  if (code_point >= 0xD800 && code_point <= 0xDFFF) return 0;
  if (code_point > 0x10FFFF) return 0;
  return length;
}

std::optional<std::size_t> FindInvalidUtf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    // ASCII runs dominate real input (JSON headers, label values); skip them byte by byte
    // without the general decoder.
    if (static_cast<std::uint8_t>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t length = Utf8SequenceLength(text, i);
    if (length == 0) return i;
    i += length;
  }
  return std::nullopt;
}

bool IsValidUtf8(std::string_view text) {
  return !FindInvalidUtf8(text).has_value();
}

}  // namespace modelplane::core
