// Measures how fast the cache's filesystem takes a staging's writes, for ModelCache status
// (mediaBandwidthBytesPerSecond): writes `bytes` in 8 MiB pieces to a temporary file in
// `folder` (O_DIRECT where the filesystem allows, as stagings write), syncs it, and returns
// bytes over the seconds that took. The file is removed; one left by a crash is removed by the
// store's recovery like any other temporary file. The agent runs it once at start.
// Thread safety: a free function.
#pragma once

#include <cstdint>
#include <filesystem>

#include "core/error/error.h"

namespace modelplane::agent {

[[nodiscard]] core::Result<std::int64_t> MeasureWriteBandwidth(const std::filesystem::path& folder,
                                                               std::uint64_t bytes);

}  // namespace modelplane::agent
