// Which bytes a proof of possession asks a revision's sources for: a few small ranges of every
// file, at offsets drawn at random for each proof. Random, because a source must then hold the
// whole file to answer, not a part prepared for the question; a file's bytes a node already
// holds for another revision are reused for this one only once its own sources answered.
// Thread safety: a pure function of its arguments; the generator belongs to the caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "node-agent/fetch/range_source.h"

namespace modelplane::agent {

struct SampledRange {
  std::size_t file = 0;  // index into the files the sample was planned for
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

// The most bytes one sampled range asks for; a smaller file is asked for whole.
inline constexpr std::uint64_t kPossessionSampleBytes = 4096;
// A file gets one range per started GiB, up to this many: more of a large file is checked, and
// a proof of a revision of thousands of files stays thousands of small reads.
inline constexpr std::uint64_t kPossessionSampleSpan = 1ULL << 30;
inline constexpr std::size_t kMaxPossessionRangesPerFile = 4;

// One range per non-empty file at a uniformly random offset (more for files over 1 GiB, see
// above); empty files get none. Ranges lie within their file.
[[nodiscard]] std::vector<SampledRange> PlanPossessionSample(const std::vector<SourceFile>& files,
                                                             std::mt19937_64& random);

}  // namespace modelplane::agent
