// Byte counts as people read them, for status messages and the kubectl plugin alike.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

namespace modelplane::core {

// "0 B", "512 B", "1.5 KiB", "140.0 GiB" (powers of 1024); negative values (never valid) print
// as "-".
[[nodiscard]] std::string FormatBytes(std::int64_t bytes);

}  // namespace modelplane::core
