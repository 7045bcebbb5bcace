#include "kubectl-plugin/quota_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/kubectl-plugin/test_objects.h"

namespace modelplane::cli {
namespace {

using testing::FieldValue;
using testing::FitsTerminal;
using ::testing::HasSubstr;
using testing::kGiB;
using ::testing::Not;

json Quota(const std::string& name, json spec, json status = nullptr) {
  json quota = {{"apiVersion", "modelplane.io/v1alpha1"},
                {"kind", "ModelQuota"},
                {"metadata", {{"name", name}, {"namespace", "team-a"}}},
                {"spec", std::move(spec)}};
  if (!status.is_null()) quota["status"] = std::move(status);
  return quota;
}

json RevisionWithin(const std::string& name, bool within, const std::string& message) {
  json revision = testing::Revision(name);
  revision["status"] = testing::ReadyStatus();
  revision["status"]["conditions"].push_back({{"type", "WithinQuota"},
                                              {"status", within ? "True" : "False"},
                                              {"reason", within ? "WithinQuota" : "QuotaExceeded"},
                                              {"message", message}});
  return revision;
}

std::string Render(const std::vector<json>& quotas, const std::vector<json>& revisions) {
  auto text = RenderNamespaceQuota("team-a", quotas, revisions);
  EXPECT_TRUE(text) << text.error().ToString();
  return text ? *text : "";
}

TEST(QuotaReportTest, ShowsUsageAgainstTheSmallestLimitsAndWhyRevisionsWereCut) {
  const std::string text =
      Render({Quota("limits", {{"prestagedBytes", "400Gi"}, {"pinTtlAfterLastUse", "24h"}},
                    {{"used", {{"prestagedBytes", 280 * kGiB}, {"pinnedBytes", 140 * kGiB}}},
                     {"limitedRevisions", json::array({"llama-r3"})},
                     {"limitedCount", 1}}),
              Quota("pins", {{"pinnedBytes", "140Gi"}, {"prestagedBytes", "1Ti"}})},
             {RevisionWithin("llama-r2", true, "every copy fits"),
              RevisionWithin("llama-r3", false,
                             "prestaged on 0 of 2 nodes asked: ModelQuota team-a/limits allows "
                             "400.0 GiB of prestaged copies in namespace team-a")});
  EXPECT_TRUE(FitsTerminal(text)) << text;
  EXPECT_EQ(FieldValue(text, "Prestaged"), "280.0 GiB of 400.0 GiB (70%; ModelQuota team-a/limits)")
      << text;
  EXPECT_EQ(FieldValue(text, "Pinned"), "140.0 GiB of 140.0 GiB (100%; ModelQuota team-a/pins)")
      << text;
  EXPECT_THAT(FieldValue(text, "Pin TTL"), HasSubstr("after the revision's last use")) << text;
  EXPECT_EQ(FieldValue(text, "Limited"), "1 revision: llama-r3") << text;
  EXPECT_THAT(text, HasSubstr("llama-r3: QuotaExceeded: prestaged on 0 of 2 nodes asked"));
  EXPECT_THAT(text, Not(HasSubstr("gpu-"))) << "a tenant's view names no node";
}

TEST(QuotaReportTest, ANamespaceWithoutQuotasSaysNothingLimitsIt) {
  const std::string text = Render({}, {testing::Revision()});
  EXPECT_THAT(FieldValue(text, "Quota"), HasSubstr("none")) << text;
  EXPECT_THAT(text, HasSubstr("llama-r2")) << text;
}

TEST(QuotaReportTest, UsageTheOperatorHasNotReportedIsUnknown) {
  const std::string text = Render({Quota("limits", {{"pinnedBytes", 10}})}, {});
  EXPECT_EQ(FieldValue(text, "Pinned"), "unknown of 10 B (-; ModelQuota team-a/limits)") << text;
  EXPECT_EQ(FieldValue(text, "Prestaged"), "unknown, no limit") << text;
  EXPECT_THAT(text, HasSubstr("No ModelRevisions in this namespace."));
}

TEST(QuotaReportTest, AMalformedQuotaIsAnError) {
  EXPECT_FALSE(RenderNamespaceQuota("team-a", {Quota("bad", {{"pinnedBytes", "lots"}})}, {}));
}

}  // namespace
}  // namespace modelplane::cli
