#include "node-agent/possession/possession_sample.h"

#include <map>
#include <set>

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

constexpr std::uint64_t kGib = 1ULL << 30;

std::vector<SourceFile> Files(const std::vector<std::uint64_t>& sizes) {
  std::vector<SourceFile> files;
  for (std::size_t index = 0; index < sizes.size(); ++index) {
    files.push_back({.path = "file-" + std::to_string(index), .size = sizes[index]});
  }
  return files;
}

std::map<std::size_t, int> RangesPerFile(const std::vector<SampledRange>& sample) {
  std::map<std::size_t, int> counts;
  for (const SampledRange& range : sample) ++counts[range.file];
  return counts;
}

TEST(PossessionSampleTest, EveryNonEmptyFileGetsARangeWithinItsBounds) {
  const std::vector<SourceFile> files = Files({1, 100, 0, 4096, 4097, 10 << 20, 0, 3});
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    std::mt19937_64 random(seed);
    const std::vector<SampledRange> sample = PlanPossessionSample(files, random);
    const auto counts = RangesPerFile(sample);
    for (std::size_t index = 0; index < files.size(); ++index) {
      const int expected = files[index].size == 0 ? 0 : 1;
      EXPECT_EQ(counts.contains(index) ? counts.at(index) : 0, expected) << "file " << index;
    }
    for (const SampledRange& range : sample) {
      const std::uint64_t size = files[range.file].size;
      EXPECT_EQ(range.length, std::min(size, kPossessionSampleBytes));
      EXPECT_LE(range.offset + range.length, size);
    }
  }
}

TEST(PossessionSampleTest, LargeFilesGetOneMoreRangePerStartedGibUpToFour) {
  const std::vector<SourceFile> files = Files({kGib, kGib + 1, 3 * kGib, 3 * kGib + 1, 100 * kGib});
  std::mt19937_64 random(7);
  const std::vector<SampledRange> sample = PlanPossessionSample(files, random);
  EXPECT_EQ(RangesPerFile(sample),
            (std::map<std::size_t, int>{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 4}}));
  for (const SampledRange& range : sample) {
    EXPECT_EQ(range.length, kPossessionSampleBytes);
    EXPECT_LE(range.offset + range.length, files[range.file].size);
  }
}

TEST(PossessionSampleTest, NoFilesOrOnlyEmptyFilesGiveNoRanges) {
  std::mt19937_64 random(1);
  EXPECT_TRUE(PlanPossessionSample({}, random).empty());
  EXPECT_TRUE(PlanPossessionSample(Files({0, 0}), random).empty());
}

// A source cannot prepare the answer: the offsets change from one proof to the next.
TEST(PossessionSampleTest, DifferentSeedsGiveDifferentOffsets) {
  const std::vector<SourceFile> files = Files({kGib});
  std::set<std::uint64_t> offsets;
  for (std::uint64_t seed = 0; seed < 32; ++seed) {
    std::mt19937_64 random(seed);
    const std::vector<SampledRange> sample = PlanPossessionSample(files, random);
    ASSERT_EQ(sample.size(), 1u);
    offsets.insert(sample[0].offset);
  }
  EXPECT_GT(offsets.size(), 30u);
  // Within one plan too: the ranges of one large file fall at different places.
  std::mt19937_64 random(3);
  const std::vector<SampledRange> sample = PlanPossessionSample(Files({4 * kGib}), random);
  ASSERT_EQ(sample.size(), 4u);
  std::set<std::uint64_t> within;
  for (const SampledRange& range : sample) within.insert(range.offset);
  EXPECT_EQ(within.size(), 4u);
}

}  // namespace
}  // namespace modelplane::agent
