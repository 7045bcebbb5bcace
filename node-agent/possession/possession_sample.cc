#include "node-agent/possession/possession_sample.h"

#include <algorithm>

namespace modelplane::agent {

std::vector<SampledRange> PlanPossessionSample(const std::vector<SourceFile>& files,
                                               std::mt19937_64& random) {
  std::vector<SampledRange> sample;
  for (std::size_t index = 0; index < files.size(); ++index) {
    const std::uint64_t size = files[index].size;
    if (size == 0) continue;
    const std::uint64_t length = std::min(size, kPossessionSampleBytes);
    const std::uint64_t started_spans = (size - 1) / kPossessionSampleSpan + 1;
    const std::uint64_t ranges =
        std::min<std::uint64_t>(started_spans, kMaxPossessionRangesPerFile);
    std::uniform_int_distribution<std::uint64_t> offsets(0, size - length);
    for (std::uint64_t drawn = 0; drawn < ranges; ++drawn) {
      sample.push_back({.file = index, .offset = offsets(random), .length = length});
    }
  }
  return sample;
}

}  // namespace modelplane::agent
