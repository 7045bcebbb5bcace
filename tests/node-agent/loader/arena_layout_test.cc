// Where a rank's tensors land in the per-file arenas, checked without any file or memory.
#include "node-agent/loader/arena_layout.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

core::TensorInfo LaidOutTensor(std::string name, core::Dtype dtype,
                               std::vector<std::uint64_t> shape, std::uint64_t begin) {
  std::uint64_t bits = core::DtypeBits(dtype);
  for (std::uint64_t dim : shape) bits *= dim;
  return core::TensorInfo{.name = std::move(name),
                          .dtype = dtype,
                          .shape = std::move(shape),
                          .data_begin = begin,
                          .data_end = begin + bits / 8};
}

core::Result<ArenaLayout> Layout(const std::vector<std::vector<core::TensorInfo>>& files,
                                 std::string_view rules, std::uint32_t rank,
                                 std::uint32_t world_size) {
  std::vector<LayoutFile> inputs;
  inputs.reserve(files.size());
  for (const auto& tensors : files) inputs.push_back(LayoutFile{.path = "f", .tensors = tensors});
  return PlanArenaLayout(inputs, *ParseShardRules(rules), rank, world_size);
}

TEST(ArenaLayoutTest, TouchingTensorsMergeIntoRunsThatMirrorTheFileBlocks) {
  const std::vector<std::vector<core::TensorInfo>> files = {
      {LaidOutTensor("a", core::Dtype::kF32, {4, 4}, 1000),   // [1000, 1064)
       LaidOutTensor("b", core::Dtype::kF32, {8}, 1064),      // [1064, 1096): touches a
       LaidOutTensor("c", core::Dtype::kF32, {2, 2}, 5000)},  // [5000, 5016): a run of its own
      {LaidOutTensor("d", core::Dtype::kU8, {10}, 8)}};
  auto layout = Layout(files, "", 0, 1);
  ASSERT_TRUE(layout) << layout.error().ToString();
  ASSERT_EQ(layout->files.size(), 2u);
  const FileArena& first = layout->files[0];
  ASSERT_EQ(first.runs.size(), 2u);
  EXPECT_EQ(first.runs[0].begin, 1000u);
  EXPECT_EQ(first.runs[0].end, 1096u);
  EXPECT_EQ(first.runs[0].region_offset, 0u);
  EXPECT_EQ(first.runs[1].begin, 5000u);
  EXPECT_EQ(first.runs[1].region_offset, 4096u);  // after the first run's block
  EXPECT_EQ(first.bytes, 8192u);
  EXPECT_EQ(layout->files[1].bytes, 4096u);
  ASSERT_EQ(layout->tensors.size(), 4u);
  // Each tensor sits at its file offset modulo the block, so aligned reads land aligned.
  const std::vector<std::uint64_t> offsets = {1000, 1064, 5000, 8};
  const std::vector<std::uint32_t> file_of = {0, 0, 0, 1};
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    EXPECT_EQ(layout->tensors[i].arena_offset, offsets[i]) << i;
    EXPECT_EQ(layout->tensors[i].file, file_of[i]) << i;
    EXPECT_EQ(layout->tensors[i].file_begin.value_or(1) % kRegionAlignment,
              layout->tensors[i].arena_offset % kRegionAlignment);
  }
  EXPECT_EQ(layout->bytes_needed, 64u + 32 + 16 + 10);
}

TEST(ArenaLayoutTest, RowSplitRanksTileTheTensorWithoutOverlap) {
  const std::vector<std::vector<core::TensorInfo>> files = {
      {LaidOutTensor("w", core::Dtype::kF32, {8, 6}, 100)}};  // 192 bytes, 48 per rank
  for (std::uint32_t rank = 0; rank < 4; ++rank) {
    auto layout = Layout(files, "*=split:0", rank, 4);
    ASSERT_TRUE(layout) << layout.error().ToString();
    ASSERT_EQ(layout->files[0].runs.size(), 1u);
    EXPECT_EQ(layout->files[0].runs[0].begin, 100u + 48 * rank);
    EXPECT_EQ(layout->files[0].runs[0].end, 148u + 48 * rank);
    EXPECT_TRUE(layout->files[0].strided.empty());
    ASSERT_EQ(layout->tensors.size(), 1u);
    EXPECT_EQ(layout->tensors[0].shape, (std::vector<std::uint64_t>{2, 6}));
    EXPECT_EQ(layout->tensors[0].arena_offset, 100u + 48 * rank);
    EXPECT_EQ(layout->bytes_needed, 48u);
  }
}

TEST(ArenaLayoutTest, ColumnSplitsGetARegionOfTheirOwnAfterTheRuns) {
  const std::vector<std::vector<core::TensorInfo>> files = {
      {LaidOutTensor("w", core::Dtype::kF32, {4, 8}, 0),  // [0, 128): 4 chunks of 16 per rank
       LaidOutTensor("v", core::Dtype::kF32, {4}, 128)}};
  auto layout = Layout(files, "w=split:1", 1, 2);
  ASSERT_TRUE(layout) << layout.error().ToString();
  const FileArena& arena = layout->files[0];
  ASSERT_EQ(arena.runs.size(), 1u);
  EXPECT_EQ(arena.runs[0].begin, 128u);
  ASSERT_EQ(arena.strided.size(), 1u);
  EXPECT_EQ(arena.strided[0].tensor, 0u);
  EXPECT_EQ(arena.strided[0].slice.chunk_count, 4u);
  EXPECT_EQ(arena.strided[0].slice.first_file_offset, 16u);
  EXPECT_EQ(arena.strided[0].slice.file_stride, 32u);
  EXPECT_EQ(layout->tensors[0].arena_offset, 4096u);  // the run's block comes first
  EXPECT_FALSE(layout->tensors[0].file_begin);
  EXPECT_EQ(layout->tensors[1].arena_offset, 128u);
  EXPECT_EQ(arena.bytes, 8192u);
  EXPECT_EQ(layout->bytes_needed, 64u + 16);
}

TEST(ArenaLayoutTest, OtherRanksTensorsAreAbsentAndEmptyOnesTakeNoRoom) {
  const std::vector<std::vector<core::TensorInfo>> files = {
      {LaidOutTensor("empty", core::Dtype::kF32, {0, 7}, 0),
       LaidOutTensor("lm_head", core::Dtype::kF16, {4, 4}, 0)}};
  auto layout = Layout(files, "lm_head=rank:1", 0, 2);
  ASSERT_TRUE(layout) << layout.error().ToString();
  ASSERT_EQ(layout->tensors.size(), 1u);
  EXPECT_EQ(layout->tensors[0].name, "empty");
  EXPECT_EQ(layout->tensors[0].bytes, 0u);
  EXPECT_FALSE(layout->tensors[0].file_begin);
  EXPECT_TRUE(layout->files[0].runs.empty());
  EXPECT_EQ(layout->files[0].bytes, 0u);
  EXPECT_EQ(layout->bytes_needed, 0u);
}

TEST(ArenaLayoutTest, AnImpossibleSplitNamesTheFile) {
  const std::vector<core::TensorInfo> tensors = {LaidOutTensor("n", core::Dtype::kF32, {6}, 0)};
  const std::vector<LayoutFile> inputs = {{.path = "shard-2.safetensors", .tensors = tensors}};
  auto layout = PlanArenaLayout(inputs, *ParseShardRules("*=split:1"), 0, 2);
  ASSERT_FALSE(layout);
  EXPECT_EQ(layout.error().code(), core::ErrorCode::kInvalidArgument);
  EXPECT_NE(layout.error().message().find("shard-2.safetensors"), std::string::npos);
}

}  // namespace
}  // namespace modelplane::agent
