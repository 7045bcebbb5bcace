#include "core/safetensors/utf8.h"

namespace modelplane::core {

std::optional<std::size_t> FindInvalidUtf8(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t size = text.size();
  std::size_t i = 0;
  while (i < size) {
    const unsigned char lead = bytes[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    unsigned char min_second = 0x80;
    unsigned char max_second = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead == 0xe0) min_second = 0xa0;  // overlong
      if (lead == 0xed) max_second = 0x9f;  // surrogates
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead == 0xf0) min_second = 0x90;  // overlong
      if (lead == 0xf4) max_second = 0x8f;  // above U+10FFFF
    } else {
      return i;
    }
    if (size - i < length) return i;
    if (bytes[i + 1] < min_second || bytes[i + 1] > max_second) return i;
    for (std::size_t k = 2; k < length; ++k) {
      if (bytes[i + k] < 0x80 || bytes[i + k] > 0xbf) return i;
    }
    i += length;
  }
  return std::nullopt;
}

}  // namespace modelplane::core
