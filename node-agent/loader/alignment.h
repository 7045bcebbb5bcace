// Rounding file offsets and sizes to block boundaries, which the loader does everywhere a
// read must land aligned (O_DIRECT, GDS) or an arena mirrors a file's blocks. One definition
// here: the unity build joins the loader's sources into one translation unit.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>

namespace modelplane::agent {

[[nodiscard]] constexpr std::uint64_t AlignDown(std::uint64_t value, std::uint64_t alignment) {
  return value / alignment * alignment;
}
[[nodiscard]] constexpr std::uint64_t AlignUp(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace modelplane::agent
