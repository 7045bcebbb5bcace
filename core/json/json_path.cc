#include "core/json/json_path.h"

#include <fmt/format.h>

namespace modelplane::core {
namespace {

bool IsPlainIdentifier(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// Keeps messages printable and single-line whatever bytes an attacker put in a key.
std::string QuoteKey(std::string_view key) {
  std::string out = "\"";
  for (unsigned char c : key) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  return out;
}

}  // namespace

std::string JsonPathChild(std::string_view parent, std::string_view key) {
  if (!IsPlainIdentifier(key)) return fmt::format("{}[{}]", parent, QuoteKey(key));
  if (parent.empty()) return std::string(key);
  return fmt::format("{}.{}", parent, key);
}

std::string JsonPathIndex(std::string_view parent, std::size_t index) {
  return fmt::format("{}[{}]", parent, index);
}

std::string_view JsonPathForDisplay(std::string_view path) {
  return path.empty() ? std::string_view("<root>") : path;
}

}  // namespace modelplane::core
