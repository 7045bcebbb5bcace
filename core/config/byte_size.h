// Parsing and formatting of byte sizes written for humans: "256Mi", "8MiB", "1G", "1.5Gi", "512".
//
// Used by configuration files and flags alike. A size is a non-negative number (optionally with
// a fraction, rounded down to whole bytes) followed by an optional unit: B; decimal k/K/KB, M/MB,
// G/GB, T/TB, P/PB, E/EB (powers of 1000, as Kubernetes quantities); binary Ki/KiB, Mi/MiB,
// Gi/GiB, Ti/TiB, Pi/PiB, Ei/EiB (powers of 1024). The result must fit in 64 bits.
//
// Also ByteSize, the strong type configuration structs use for such fields, so the config
// binder knows to parse "256Mi" rather than a plain integer.
//
// Thread safety: pure functions.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error/error.h"

namespace modelplane::core {

struct ByteSize {
  std::uint64_t bytes = 0;
  friend auto operator<=>(const ByteSize&, const ByteSize&) = default;
};

[[nodiscard]] Result<std::uint64_t> ParseByteSize(std::string_view text);

// Exact and read back by ParseByteSize: the largest binary unit that divides the size ("256Mi",
// "1Gi"), else plain bytes ("1000").
[[nodiscard]] std::string FormatByteSize(std::uint64_t bytes);

}  // namespace modelplane::core
