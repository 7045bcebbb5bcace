// Bucket layouts for histograms: validation of caller-chosen bounds and the usual generators.
//
// Bounds must be finite and strictly increasing; the +Inf bucket is always added by the
// histogram itself, so a layout never lists it.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <vector>

#include "core/error/error.h"

namespace modelplane::core {

// At most this many finite buckets per histogram: each is an atomic per child and a line per
// child in every scrape.
inline constexpr std::size_t kMaxHistogramBuckets = 64;

[[nodiscard]] Status ValidateBucketBounds(const std::vector<double>& upper_bounds);

// start, start*factor, start*factor^2, ... (count bounds); start > 0, factor > 1.
[[nodiscard]] Result<std::vector<double>> ExponentialBuckets(double start, double factor,
                                                             std::size_t count);

// start, start+width, ... (count bounds); width > 0.
[[nodiscard]] Result<std::vector<double>> LinearBuckets(double start, double width,
                                                        std::size_t count);

// 1 ms to about 65 s in powers of two: fits request latencies and whole-file fetch times.
[[nodiscard]] std::vector<double> DefaultSecondsBuckets();

}  // namespace modelplane::core
