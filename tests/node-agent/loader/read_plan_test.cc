// The reads a load submits, planned without I/O: ranges, order, request sizes, staging and
// where each byte lands, for each way a file is read.
#include "node-agent/loader/read_plan.h"

#include <ostream>

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

core::TensorInfo PlannedTensor(std::string name, std::vector<std::uint64_t> shape,
                               std::uint64_t begin) {
  std::uint64_t bytes = 1;
  for (std::uint64_t dim : shape) bytes *= dim;
  return core::TensorInfo{.name = std::move(name),
                          .dtype = core::Dtype::kU8,
                          .shape = std::move(shape),
                          .data_begin = begin,
                          .data_end = begin + bytes};
}

ArenaLayout LayoutOf(const std::vector<core::TensorInfo>& tensors, std::string_view rules = "",
                     std::uint32_t rank = 0, std::uint32_t world_size = 1) {
  const std::vector<LayoutFile> files = {{.path = "f", .tensors = tensors}};
  auto layout = PlanArenaLayout(files, *ParseShardRules(rules), rank, world_size);
  EXPECT_TRUE(layout) << layout.error().ToString();
  return layout ? std::move(*layout) : ArenaLayout{};
}

ReadPlan Plan(const ArenaLayout& layout, FileReadMode mode, bool cpu,
              std::uint64_t request_bytes = 4096, std::uint64_t gap = 64u << 10) {
  const std::vector<FileReadMode> modes(layout.files.size(), mode);
  return PlanReads(
      layout, modes,
      ReadPlanOptions{
          .host_destination = cpu, .request_bytes = request_bytes, .coalesce_gap_bytes = gap});
}

struct Range {
  std::uint64_t offset;
  std::uint64_t length;
  std::uint64_t destination;
  friend bool operator==(const Range&, const Range&) = default;
  friend void PrintTo(const Range& range, std::ostream* out) {
    *out << "{" << range.offset << ", " << range.length << ", " << range.destination << "}";
  }
};

std::vector<Range> Ranges(const std::vector<ReadOp>& reads) {
  std::vector<Range> ranges;
  ranges.reserve(reads.size());
  for (const ReadOp& op : reads) {
    ranges.push_back(
        Range{op.offset, op.length, op.staged ? op.pieces[0].destination : op.destination});
  }
  return ranges;
}

// One run, [100, 10100) of the file, at 100 in the arena.
std::vector<core::TensorInfo> OneRun() {
  return {PlannedTensor("x", {10000}, 100)};
}

TEST(ReadPlanTest, CpuRunsAreReadInPlaceInRequestSizedPieces) {
  const ArenaLayout layout = LayoutOf(OneRun());
  const ReadPlan direct = Plan(layout, {.direct = true}, /*cpu=*/true);
  // O_DIRECT: whole blocks, from the block below the run to the block above it.
  EXPECT_EQ(Ranges(direct.reads),
            (std::vector<Range>{{0, 4096, 0}, {4096, 4096, 4096}, {8192, 4096, 8192}}));
  const ReadPlan buffered = Plan(layout, {}, /*cpu=*/true);
  EXPECT_EQ(Ranges(buffered.reads),
            (std::vector<Range>{{100, 4096, 100}, {4196, 4096, 4196}, {8292, 1808, 8292}}));
  for (const ReadOp& op : buffered.reads) EXPECT_FALSE(op.staged);
  EXPECT_FALSE(buffered.Staged());
  EXPECT_TRUE(buffered.gds_reads.empty());
  EXPECT_TRUE(buffered.mapped.empty());
}

TEST(ReadPlanTest, DeviceRunsGoThroughTheRingUnlessGdsReadsThem) {
  const ArenaLayout layout = LayoutOf(OneRun());
  const ReadPlan staged = Plan(layout, {}, /*cpu=*/false, /*request_bytes=*/8192);
  EXPECT_TRUE(staged.Staged());
  EXPECT_EQ(Ranges(staged.reads), (std::vector<Range>{{100, 8192, 100}, {8292, 1808, 8292}}));
  for (const ReadOp& op : staged.reads) {
    ASSERT_EQ(op.pieces.size(), 1u);
    EXPECT_EQ(op.pieces[0].slot_offset, 0u);
    EXPECT_EQ(op.pieces[0].length, op.length);
  }
  const ReadPlan gds = Plan(layout, {.direct = true, .gds = true}, /*cpu=*/false, 8192);
  EXPECT_TRUE(gds.reads.empty());
  EXPECT_FALSE(gds.Staged());
  EXPECT_EQ(Ranges(gds.gds_reads), (std::vector<Range>{{0, 8192, 0}, {8192, 4096, 8192}}));
}

TEST(ReadPlanTest, MappedFilesArePopulatedNotRead) {
  const ReadPlan plan = Plan(LayoutOf(OneRun()), {.mapped = true}, /*cpu=*/true);
  EXPECT_TRUE(plan.reads.empty());
  ASSERT_EQ(plan.mapped.size(), 1u);
  EXPECT_EQ(plan.mapped[0].offset, 100u);
  EXPECT_EQ(plan.mapped[0].length, 10000u);
}

TEST(ReadPlanTest, EachRankOfARowSplitReadsOnlyItsRows) {
  const std::vector<core::TensorInfo> tensors = {PlannedTensor("w", {8, 1024}, 64)};
  for (std::uint32_t rank = 0; rank < 4; ++rank) {
    const ReadPlan plan = Plan(LayoutOf(tensors, "*=split:0", rank, 4), {}, /*cpu=*/true);
    const std::uint64_t begin = 64 + 2048 * rank;
    // The run's region starts at the block below it: the arena holds one run, so its offset
    // is the file offset modulo the block.
    EXPECT_EQ(Ranges(plan.reads), (std::vector<Range>{{begin, 2048, begin % 4096}})) << rank;
  }
}

// w is 64 rows of 256 bytes; rank 1 of 2 keeps bytes [128, 256) of each row.
std::vector<core::TensorInfo> Columns() {
  return {PlannedTensor("w", {64, 256}, 0)};
}

TEST(ReadPlanTest, ColumnSplitChunksCoalesceIntoSlotSizedStagedReads) {
  const ArenaLayout layout = LayoutOf(Columns(), "*=split:1", 1, 2);
  const ReadPlan direct = Plan(layout, {.direct = true}, /*cpu=*/true, /*request_bytes=*/8192);
  ASSERT_EQ(direct.reads.size(), 2u);
  for (std::size_t r = 0; r < 2; ++r) {
    const ReadOp& op = direct.reads[r];
    EXPECT_TRUE(op.staged);
    EXPECT_EQ(op.offset, 8192u * r);
    EXPECT_EQ(op.length, 8192u);  // a whole slot: 32 rows
    ASSERT_EQ(op.pieces.size(), 32u);
    for (std::size_t p = 0; p < 32; ++p) {
      const std::uint64_t row = 32 * r + p;
      EXPECT_EQ(op.pieces[p].slot_offset, 256 * row + 128 - op.offset);
      EXPECT_EQ(op.pieces[p].length, 128u);
      EXPECT_EQ(op.pieces[p].destination, 128 * row);  // the tensor's region starts at 0
    }
  }
  // Buffered, a read starts at the first chunk and ends at the last, byte exact.
  const ReadPlan buffered = Plan(layout, {}, /*cpu=*/true, 8192);
  ASSERT_EQ(buffered.reads.size(), 2u);
  EXPECT_EQ(buffered.reads[0].offset, 128u);
  EXPECT_EQ(buffered.reads[0].length, 8064u);
  EXPECT_EQ(buffered.reads[1].offset, 8320u);
  EXPECT_EQ(buffered.reads[1].length, 8064u);
}

TEST(ReadPlanTest, TheCoalescingGapCountsBlocksActuallyRead) {
  // 4 rows of 256 bytes: rank 1's chunks are 128 bytes, 128 apart, all in one 4 KiB block.
  const ArenaLayout layout = LayoutOf({PlannedTensor("w", {4, 256}, 0)}, "*=split:1", 1, 2);
  const ReadPlan buffered = Plan(layout, {}, /*cpu=*/true, 8192, /*gap=*/0);
  EXPECT_EQ(Ranges(buffered.reads),
            (std::vector<Range>{{128, 128, 0}, {384, 128, 128}, {640, 128, 256}, {896, 128, 384}}));
  // Under O_DIRECT the block is read whole anyway: one read, four pieces.
  const ReadPlan direct = Plan(layout, {.direct = true}, /*cpu=*/true, 8192, /*gap=*/0);
  ASSERT_EQ(direct.reads.size(), 1u);
  EXPECT_EQ(direct.reads[0].offset, 0u);
  EXPECT_EQ(direct.reads[0].length, 4096u);
  EXPECT_EQ(direct.reads[0].pieces.size(), 4u);
}

TEST(ReadPlanTest, LargeChunksOfBufferedFilesOnTheCpuAreReadInPlace) {
  // 2 rows of 256 KiB: each rank's chunk is 128 KiB, over kDirectChunkMinBytes.
  const std::vector<core::TensorInfo> tensors = {PlannedTensor("w", {2, 256u << 10}, 0)};
  const ArenaLayout layout = LayoutOf(tensors, "*=split:1", 0, 2);
  const ReadPlan plan = Plan(layout, {}, /*cpu=*/true, /*request_bytes=*/64u << 10);
  EXPECT_FALSE(plan.Staged());
  EXPECT_EQ(
      Ranges(plan.reads),
      (std::vector<Range>{
          {0, 65536, 0}, {65536, 65536, 65536}, {262144, 65536, 131072}, {327680, 65536, 196608}}));
  // Not on a device, nor under O_DIRECT: those are staged.
  EXPECT_TRUE(Plan(layout, {}, /*cpu=*/false, 64u << 10).Staged());
  EXPECT_TRUE(Plan(layout, {.direct = true}, /*cpu=*/true, 64u << 10).Staged());
}

TEST(ReadPlanTest, ReadsFollowFileOrderRunsBeforeColumnSplits) {
  const std::vector<core::TensorInfo> first = {PlannedTensor("w", {4, 256}, 0),
                                               PlannedTensor("b", {16}, 1024)};
  const std::vector<core::TensorInfo> second = {PlannedTensor("c", {32}, 8)};
  const std::vector<LayoutFile> files = {{.path = "0", .tensors = first},
                                         {.path = "1", .tensors = second}};
  auto layout = PlanArenaLayout(files, *ParseShardRules("w=split:1"), 0, 2);
  ASSERT_TRUE(layout);
  const std::vector<FileReadMode> modes(2);
  const ReadPlan plan = PlanReads(*layout, modes, ReadPlanOptions{.host_destination = true});
  ASSERT_EQ(plan.reads.size(), 3u);
  EXPECT_EQ(plan.reads[0].file, 0u);  // b's run
  EXPECT_EQ(plan.reads[0].offset, 1024u);
  EXPECT_EQ(plan.reads[1].file, 0u);  // w's chunks, one staged read
  EXPECT_TRUE(plan.reads[1].staged);
  EXPECT_EQ(plan.reads[1].pieces.size(), 4u);
  EXPECT_EQ(plan.reads[2].file, 1u);
  EXPECT_EQ(plan.reads[2].offset, 8u);
}

}  // namespace
}  // namespace modelplane::agent
