#include "core/api/model_quota.h"

#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::core::api {
namespace {

using ::testing::HasSubstr;

nlohmann::json QuotaJson(nlohmann::json spec, std::string name = "limits") {
  return {{"apiVersion", "modelplane.io/v1alpha1"},
          {"kind", "ModelQuota"},
          {"metadata", {{"name", std::move(name)}, {"namespace", "team-a"}, {"generation", 3}}},
          {"spec", std::move(spec)}};
}

TEST(ModelQuotaTest, ByteLimitsAreIntegersOrKubernetesQuantities) {
  auto quota = ModelQuotaFromJson(QuotaJson(
      {{"prestagedBytes", "500Gi"}, {"pinnedBytes", 1000}, {"pinTtlAfterLastUse", "1h30m"}}));
  ASSERT_TRUE(quota) << quota.error().ToString();
  EXPECT_EQ(quota->spec.prestaged_bytes, std::int64_t{500} << 30);
  EXPECT_EQ(quota->spec.pinned_bytes, 1000);
  EXPECT_EQ(quota->spec.pin_ttl_after_last_use, std::chrono::seconds(5400));
  EXPECT_EQ(quota->metadata.namespace_name, "team-a");

  auto decimal = ModelQuotaFromJson(QuotaJson({{"prestagedBytes", "1.5T"}, {"pinnedBytes", "0"}}));
  ASSERT_TRUE(decimal) << decimal.error().ToString();
  EXPECT_EQ(decimal->spec.prestaged_bytes, std::int64_t{1'500'000'000'000});
  EXPECT_EQ(decimal->spec.pinned_bytes, 0);  // zero is a limit: nothing may be pinned
  EXPECT_FALSE(decimal->spec.pin_ttl_after_last_use);
}

TEST(ModelQuotaTest, AFractionOfAByteRoundsUp) {
  auto quota = ModelQuotaFromJson(QuotaJson({{"prestagedBytes", "1500m"}}));
  ASSERT_TRUE(quota) << quota.error().ToString();
  EXPECT_EQ(quota->spec.prestaged_bytes, 2);
}

TEST(ModelQuotaTest, AbsentLimitsLimitNothing) {
  auto quota = ModelQuotaFromJson(QuotaJson(nlohmann::json::object()));
  ASSERT_TRUE(quota) << quota.error().ToString();
  EXPECT_FALSE(CombineQuotas({*quota}).Limits());
}

TEST(ModelQuotaTest, MalformedLimitsAreRefusedWithTheirField) {
  for (const auto& [spec, field] : std::vector<std::pair<nlohmann::json, std::string>>{
           {{{"prestagedBytes", -1}}, "spec.prestagedBytes"},
           {{{"prestagedBytes", "-5Gi"}}, "spec.prestagedBytes"},
           {{{"pinnedBytes", "lots"}}, "spec.pinnedBytes"},
           {{{"pinnedBytes", true}}, "spec.pinnedBytes"},
           {{{"pinnedBytes", std::string(100, '9')}}, "spec.pinnedBytes"},
           {{{"pinTtlAfterLastUse", "1d"}}, "spec.pinTtlAfterLastUse"},
           {{{"pinTtlAfterLastUse", 60}}, "spec.pinTtlAfterLastUse"}}) {
    auto quota = ModelQuotaFromJson(QuotaJson(spec));
    ASSERT_FALSE(quota) << spec.dump();
    EXPECT_THAT(quota.error().message(), HasSubstr(field)) << spec.dump();
  }
}

TEST(ModelQuotaTest, StatusRoundTrips) {
  const ModelQuotaStatus status{.observed_generation = 3,
                                .used = {.prestaged_bytes = 40, .pinned_bytes = 7},
                                .limited_revisions = {"llama-r2"},
                                .limited_count = 1};
  nlohmann::json object = QuotaJson({{"pinnedBytes", 10}});
  object["status"] = ToJson(status);
  auto quota = ModelQuotaFromJson(object);
  ASSERT_TRUE(quota) << quota.error().ToString();
  EXPECT_EQ(quota->status, status);
}

TEST(ModelQuotaTest, TheSmallestLimitOfEachKindWinsAndNamesItsQuota) {
  auto wide = ModelQuotaFromJson(QuotaJson(
      {{"prestagedBytes", 100}, {"pinnedBytes", 5}, {"pinTtlAfterLastUse", "1h"}}, "wide"));
  auto narrow = ModelQuotaFromJson(
      QuotaJson({{"prestagedBytes", 50}, {"pinTtlAfterLastUse", "2h"}}, "narrow"));
  ASSERT_TRUE(wide && narrow);
  for (const auto& quotas :
       {std::vector<ModelQuota>{*wide, *narrow}, std::vector<ModelQuota>{*narrow, *wide}}) {
    const NamespaceQuota combined = CombineQuotas(quotas);
    EXPECT_EQ(combined.prestaged_bytes, 50);
    EXPECT_EQ(combined.prestaged_by, "team-a/narrow");
    EXPECT_EQ(combined.pinned_bytes, 5);
    EXPECT_EQ(combined.pinned_by, "team-a/wide");
    EXPECT_EQ(combined.pin_ttl_after_last_use, std::chrono::hours(1));
    EXPECT_EQ(combined.pin_ttl_by, "team-a/wide");
    EXPECT_TRUE(combined.Limits());
  }
}

TEST(ModelQuotaTest, SumsSaturateInsteadOfOverflowing) {
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const QuotaBytes sum = SaturatingSum({.prestaged_bytes = max - 1, .pinned_bytes = 2},
                                       {.prestaged_bytes = 5, .pinned_bytes = 3});
  EXPECT_EQ(sum.prestaged_bytes, max);
  EXPECT_EQ(sum.pinned_bytes, 5);
}

}  // namespace
}  // namespace modelplane::core::api
