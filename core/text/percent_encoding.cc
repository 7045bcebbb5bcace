#include "core/text/percent_encoding.h"

#include "core/text/hex.h"

namespace modelplane::core {
namespace {

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

}  // namespace

std::string PercentEncode(std::string_view text, bool keep_slash) {
  static constexpr char kUpperDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() * 3);
  for (const char raw : text) {
    const auto c = static_cast<unsigned char>(raw);
    if (IsUnreserved(c) || (keep_slash && c == '/')) {
      out.push_back(raw);
    } else {
      out.push_back('%');
      out.push_back(kUpperDigits[c >> 4]);
      out.push_back(kUpperDigits[c & 0x0f]);
    }
  }
  return out;
}

std::optional<std::string> PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;  // a truncated escape
    const int high = HexDigitValue(text[i + 1]);
    const int low = HexDigitValue(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return out;
}

}  // namespace modelplane::core
