#include "core/text/byte_text.h"

#include <array>
#include <string_view>

#include <fmt/format.h>

namespace modelplane::core {

std::string FormatBytes(std::int64_t bytes) {
  if (bytes < 0) return "-";
  if (bytes < 1024) return fmt::format("{} B", bytes);
  static constexpr std::array<std::string_view, 6> kUnits = {"KiB", "MiB", "GiB",
                                                             "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  // 1023.96 KiB would print as "1024.0 KiB": move up once the rounded value reaches 1024.
  while (value >= 1023.95 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

}  // namespace modelplane::core
