#include "operator/quotas/quota_grant.h"

#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

api::NamespaceQuota Limits(std::optional<std::int64_t> prestaged,
                           std::optional<std::int64_t> pinned) {
  return {.prestaged_bytes = prestaged,
          .pinned_bytes = pinned,
          .prestaged_by = "team-a/limits",
          .pinned_by = "team-a/pins"};
}

TEST(QuotaGrantTest, EverythingFitsUnderNoQuota) {
  const QuotaGrant grant = GrantWithinQuota(
      {.bytes_per_copy = 20 * kGiB, .prestage_nodes = {"a", "b", "c"}, .pinned_nodes = {"d"}}, {},
      {.prestaged_bytes = 1000 * kGiB}, "team-a");
  EXPECT_THAT(grant.prestage_nodes, ElementsAre("a", "b", "c"));
  EXPECT_THAT(grant.pinned_nodes, ElementsAre("d"));
  EXPECT_EQ(grant.charge.prestaged_bytes, 60 * kGiB);
  EXPECT_EQ(grant.charge.pinned_bytes, 20 * kGiB);
  EXPECT_FALSE(grant.Limited());
}

TEST(QuotaGrantTest, PrestagedCopiesAreCutToThePreferredOnesThatFit) {
  const QuotaGrant grant =
      GrantWithinQuota({.bytes_per_copy = 20 * kGiB, .prestage_nodes = {"held", "b", "c", "d"}},
                       Limits(100 * kGiB, std::nullopt), {.prestaged_bytes = 50 * kGiB}, "team-a");
  EXPECT_THAT(grant.prestage_nodes, ElementsAre("held", "b"));
  EXPECT_EQ(grant.charge.prestaged_bytes, 40 * kGiB);
  ASSERT_TRUE(grant.Limited());
  EXPECT_THAT(grant.refusals,
              ElementsAre("prestaged on 2 of 4 nodes asked: ModelQuota team-a/limits allows "
                          "100.0 GiB of prestaged copies in namespace team-a, the namespace's "
                          "other revisions hold 50.0 GiB and one copy of this revision is "
                          "20.0 GiB"));
}

TEST(QuotaGrantTest, OthersOverTheLimitLeaveNothing) {
  const QuotaGrant grant =
      GrantWithinQuota({.bytes_per_copy = kGiB, .prestage_nodes = {"a"}, .pinned_nodes = {"b"}},
                       Limits(10 * kGiB, 0), {.prestaged_bytes = 11 * kGiB}, "team-a");
  EXPECT_THAT(grant.prestage_nodes, IsEmpty());
  EXPECT_THAT(grant.pinned_nodes, IsEmpty());
  EXPECT_EQ(grant.charge, api::QuotaBytes{});
  ASSERT_EQ(grant.refusals.size(), 2U);
  EXPECT_THAT(grant.refusals[1], HasSubstr("pinned on 0 of 1 nodes asked: ModelQuota team-a/pins"));
}

TEST(QuotaGrantTest, EachKindHasItsOwnLimit) {
  const QuotaGrant grant = GrantWithinQuota(
      {.bytes_per_copy = 10, .prestage_nodes = {"a", "b"}, .pinned_nodes = {"c", "d", "e"}},
      Limits(std::nullopt, 25), {.prestaged_bytes = 1'000'000, .pinned_bytes = 0}, "team-a");
  EXPECT_THAT(grant.prestage_nodes, ElementsAre("a", "b"));
  EXPECT_THAT(grant.pinned_nodes, ElementsAre("c", "d"));
  ASSERT_EQ(grant.refusals.size(), 1U);
  EXPECT_THAT(grant.refusals[0], HasSubstr("pinned on 2 of 3"));
  EXPECT_THAT(grant.refusals[0], Not(HasSubstr("prestaged")));
}

TEST(QuotaGrantTest, AnEmptyRevisionCostsNothing) {
  const QuotaGrant grant = GrantWithinQuota({.bytes_per_copy = 0, .prestage_nodes = {"a", "b"}},
                                            Limits(0, 0), {}, "team-a");
  EXPECT_THAT(grant.prestage_nodes, ElementsAre("a", "b"));
  EXPECT_FALSE(grant.Limited());
}

TEST(QuotaGrantTest, HugeRevisionsOnManyNodesDoNotOverflow) {
  const std::int64_t huge = std::int64_t{1} << 62;
  const QuotaGrant grant = GrantWithinQuota(
      {.bytes_per_copy = huge, .prestage_nodes = {"a", "b", "c", "d"}}, {}, {}, "team-a");
  EXPECT_EQ(grant.charge.prestaged_bytes, std::numeric_limits<std::int64_t>::max());
}

TEST(QuotaGrantTest, APrestageAskBeyondTheLimitAloneIsRefusedAtAdmission) {
  const api::NamespaceQuota quota = Limits(100 * kGiB, std::nullopt);
  EXPECT_FALSE(PrestageBeyondQuota(20 * kGiB, 5, quota, "team-a"));
  const auto refused = PrestageBeyondQuota(20 * kGiB, 6, quota, "team-a");
  ASSERT_TRUE(refused);
  EXPECT_THAT(*refused, HasSubstr("spec.prestage.nodes 6 asks for 120.0 GiB"));
  EXPECT_THAT(*refused, HasSubstr("ask for at most 5 nodes"));
  EXPECT_FALSE(PrestageBeyondQuota(20 * kGiB, 6, {}, "team-a")) << "no limit";
  EXPECT_FALSE(PrestageBeyondQuota(0, 6, quota, "team-a")) << "an empty revision costs nothing";
}

}  // namespace
}  // namespace modelplane::controller
