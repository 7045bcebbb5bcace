#include "node-agent/loader/shard_plan.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

core::TensorInfo Tensor(std::string name, core::Dtype dtype, std::vector<std::uint64_t> shape,
                        std::uint64_t begin) {
  std::uint64_t bits = core::DtypeBits(dtype);
  for (std::uint64_t dim : shape) bits *= dim;
  return core::TensorInfo{.name = std::move(name),
                          .dtype = dtype,
                          .shape = std::move(shape),
                          .data_begin = begin,
                          .data_end = begin + bits / 8};
}

TEST(ShardRulesTest, ParsesEveryAction) {
  auto rules = ParseShardRules(
      "*.q_proj.weight=split:0; *.o_proj.weight = split:1\nlm_head*=rank:3;"
      "*=replicate");
  ASSERT_TRUE(rules) << rules.error().ToString();
  ASSERT_EQ(rules->size(), 4u);
  EXPECT_EQ((*rules)[0],
            (ShardRule{.pattern = "*.q_proj.weight", .kind = ShardRule::Kind::kSplit}));
  EXPECT_EQ((*rules)[1].dim, 1u);
  EXPECT_EQ((*rules)[2].kind, ShardRule::Kind::kWholeToRank);
  EXPECT_EQ((*rules)[2].rank, 3u);
  EXPECT_EQ((*rules)[3].kind, ShardRule::Kind::kReplicate);
}

TEST(ShardRulesTest, RejectsMalformedRules) {
  for (const char* text :
       {"nopattern", "=split:0", "x=split:", "x=split:a", "x=rank:-1", "x=shard"}) {
    EXPECT_FALSE(ParseShardRules(text)) << text;
  }
}

TEST(ShardRulesTest, FirstMatchWins) {
  auto rules = ParseShardRules("a.*=rank:1;*=split:0");
  ASSERT_TRUE(rules);
  EXPECT_EQ(MatchShardRule("a.b", *rules)->kind, ShardRule::Kind::kWholeToRank);
  EXPECT_EQ(MatchShardRule("b", *rules)->kind, ShardRule::Kind::kSplit);
}

TEST(PlanTensorSliceTest, SplitOnDimensionZeroIsOneRange) {
  auto rules = *ParseShardRules("*=split:0");
  const auto tensor = Tensor("w", core::Dtype::kF32, {8, 6}, 100);
  auto slice = PlanTensorSlice(tensor, rules, 1, 4);
  ASSERT_TRUE(slice && *slice);
  EXPECT_EQ((*slice)->shape, (std::vector<std::uint64_t>{2, 6}));
  EXPECT_TRUE((*slice)->Contiguous());
  EXPECT_EQ((*slice)->first_file_offset, 100u + 48u);
  EXPECT_EQ((*slice)->output_bytes, 48u);
}

TEST(PlanTensorSliceTest, SplitOnLastDimensionIsOneChunkPerRow) {
  auto rules = *ParseShardRules("*=split:1");
  const auto tensor = Tensor("w", core::Dtype::kBF16, {3, 8}, 0);
  auto slice = PlanTensorSlice(tensor, rules, 1, 2);
  ASSERT_TRUE(slice && *slice);
  EXPECT_EQ((*slice)->shape, (std::vector<std::uint64_t>{3, 4}));
  EXPECT_EQ((*slice)->chunk_count, 3u);
  EXPECT_EQ((*slice)->chunk_bytes, 8u);
  EXPECT_EQ((*slice)->Chunk(2).file_offset, 2 * 16u + 8u);
  EXPECT_EQ((*slice)->Chunk(2).output_offset, 16u);
}

TEST(PlanTensorSliceTest, WholeTensorToOneRank) {
  auto rules = *ParseShardRules("lm_head=rank:1");
  const auto tensor = Tensor("lm_head", core::Dtype::kF16, {4, 4}, 0);
  auto mine = PlanTensorSlice(tensor, rules, 1, 2);
  auto other = PlanTensorSlice(tensor, rules, 0, 2);
  ASSERT_TRUE(mine && other);
  EXPECT_TRUE(mine->has_value());
  EXPECT_FALSE(other->has_value());
}

TEST(PlanTensorSliceTest, RejectsImpossibleSplits) {
  const auto tensor = Tensor("w", core::Dtype::kF32, {6, 5}, 0);
  EXPECT_FALSE(PlanTensorSlice(tensor, *ParseShardRules("*=split:1"), 0, 2));  // 5 % 2
  EXPECT_FALSE(PlanTensorSlice(tensor, *ParseShardRules("*=split:2"), 0, 2));  // no dim 2
  EXPECT_FALSE(PlanTensorSlice(tensor, *ParseShardRules("*=rank:2"), 0, 2));   // no rank 2
  EXPECT_FALSE(PlanTensorSlice(tensor, {}, 2, 2));                             // rank >= size
  const auto packed = Tensor("f4", core::Dtype::kF4, {2, 2}, 0);
  EXPECT_FALSE(PlanTensorSlice(packed, *ParseShardRules("*=split:1"), 0, 2));  // half a byte
}

}  // namespace
}  // namespace modelplane::agent
