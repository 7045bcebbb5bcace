#include "kubectl-plugin/revision_patches.h"

#include <gtest/gtest.h>

#include "tests/kubectl-plugin/test_objects.h"

namespace modelplane::cli {
namespace {

using nlohmann::json;

// The text with its line breaks made spaces, so tests need not know where it wraps.
std::string Joined(const std::string& text) {
  std::string joined;
  for (const std::string& line : testing::Lines(text)) joined += (joined.empty() ? "" : " ") + line;
  return joined;
}

TEST(RevisionPatchesTest, PrestageIsAMergePatchThatKeepsTheSelector) {
  EXPECT_EQ(PrestagePatch(3), json::parse(R"({"spec":{"prestage":{"nodes":3}}})"));
  json revision = testing::Revision();
  revision["spec"]["prestage"] = {{"nodeSelector", {{"pool", "h100"}}}, {"nodes", 1}};
  json merged = revision;
  merged.merge_patch(PrestagePatch(3));
  EXPECT_EQ(merged["spec"]["prestage"]["nodeSelector"]["pool"], "h100");
  EXPECT_EQ(merged["spec"]["prestage"]["nodes"], 3);
  EXPECT_EQ(merged["spec"]["files"], revision["spec"]["files"]);
}

TEST(RevisionPatchesTest, RevokeSetsOnlyTheFlag) {
  json merged = testing::Revision();
  merged.merge_patch(RevokePatch());
  EXPECT_EQ(merged["spec"]["revoked"], true);
  EXPECT_EQ(merged["spec"]["engine"]["name"], "vllm");
}

TEST(RevisionPatchesTest, PrestageSummaryNamesTheChangeAndHowToFollowIt) {
  json before = testing::Revision();
  json after = before;
  after["spec"]["prestage"] = {{"nodeSelector", {{"pool", "h100"}}}, {"nodes", 2}};
  EXPECT_TRUE(testing::FitsTerminal(PrestageSummary(before, after)));
  const std::string text = Joined(PrestageSummary(before, after));
  EXPECT_NE(text.find("ModelRevision team-a/llama-r2: spec.prestage.nodes 0 -> 2."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("2 nodes among nodes matching pool=h100"), std::string::npos) << text;
  EXPECT_NE(text.find("Follow it: kubectl modelplane status llama-r2 -n team-a"),
            std::string::npos);
  EXPECT_NE(PrestageSummary(after, after).find("was already 2"), std::string::npos);
  json stopped = after;
  stopped["spec"]["prestage"]["nodes"] = 0;
  EXPECT_NE(Joined(PrestageSummary(after, stopped)).find("no longer asks nodes to prestage it"),
            std::string::npos);
}

TEST(RevisionPatchesTest, RevokeSummaryTellsHowToWatchThePurge) {
  EXPECT_TRUE(testing::FitsTerminal(RevokeSummary(testing::Revision(), false)));
  const std::string text = Joined(RevokeSummary(testing::Revision(), false));
  EXPECT_NE(text.find("is revoked"), std::string::npos);
  EXPECT_NE(text.find("cannot be undone"), std::string::npos);
  EXPECT_NE(text.find("status.purge"), std::string::npos);
  EXPECT_NE(text.find("kubectl get mr llama-r2 -n team-a -o wide -w"), std::string::npos);
  EXPECT_NE(RevokeSummary(testing::Revision(), true).find("was already revoked"),
            std::string::npos);
}

}  // namespace
}  // namespace modelplane::cli
