#include "core/text/hex.h"

namespace modelplane::core {
namespace {

constexpr char kDigits[] = "0123456789abcdef";

template <typename Byte>
std::string Encode(std::span<const Byte> bytes) {
  std::string out(bytes.size() * 2, '0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto byte = static_cast<std::uint8_t>(bytes[i]);
    out[2 * i] = kDigits[byte >> 4];
    out[2 * i + 1] = kDigits[byte & 0x0f];
  }
  return out;
}

}  // namespace

std::string EncodeHex(std::span<const std::uint8_t> bytes) {
  return Encode(bytes);
}

std::string EncodeHex(std::string_view bytes) {
  return Encode(std::span<const char>(bytes.data(), bytes.size()));
}

int HexDigitValue(char digit) {
  if (digit >= '0' && digit <= '9') return digit - '0';
  if (digit >= 'a' && digit <= 'f') return digit - 'a' + 10;
  if (digit >= 'A' && digit <= 'F') return digit - 'A' + 10;
  return -1;
}

bool DecodeHex(std::string_view text, std::span<std::uint8_t> out) {
  if (text.size() != out.size() * 2) return false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int high = HexDigitValue(text[2 * i]);
    const int low = HexDigitValue(text[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    out[i] = static_cast<std::uint8_t>(high << 4 | low);
  }
  return true;
}

}  // namespace modelplane::core
