// Tree listing pages as the Hub writes them (the entries of e2e/hub/hub_handler.py, which
// tests/e2e/test_hub_server.py holds against huggingface_hub) and the Link header to the next.
#include "core/hub/hub_tree_page.h"

#include <gtest/gtest.h>

#include "core/hub/hub_errors.h"

namespace modelplane::core {
namespace {

constexpr std::string_view kSha =
    "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";

TEST(ParseTreePage, FilesWithTheirLfsDigestsDirectoriesDropped) {
  const std::string page = R"([
    {"type": "directory", "oid": "1111111111111111111111111111111111111111", "size": 0,
     "path": "weights"},
    {"type": "file", "oid": "2222222222222222222222222222222222222222", "size": 13,
     "path": "config.json"},
    {"type": "file", "oid": "3333333333333333333333333333333333333333", "size": 5000,
     "path": "weights/model.safetensors",
     "lfs": {"oid": ")" + std::string(kSha) +
                           R"(", "size": 5000, "pointerSize": 130}}])";
  auto files = ParseTreePage(page);
  ASSERT_TRUE(files.has_value()) << files.error().ToString();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0], (HubFile{.path = "config.json", .size = 13}));
  EXPECT_EQ((*files)[1], (HubFile{.path = "weights/model.safetensors",
                                  .size = 5000,
                                  .sha256 = std::string(kSha),
                                  .lfs = true}));
}

TEST(ParseTreePage, RefusesWhatIsNotAListing) {
  for (const std::string& page :
       {std::string("not json"), std::string(R"({"error": "x"})"),
        std::string(R"([{"path": "a", "size": 1}])"),
        std::string(R"([{"type": "file", "size": 1}])"),
        std::string(R"([{"type": "file", "path": "a", "size": -1}])"),
        std::string(R"([{"type": "file", "path": "a", "size": 1, "lfs": {"oid": "abc"}}])"),
        std::string(R"([{"type": "file", "path": "a", "size": 1, "lfs": {"oid": ")") +
            std::string(64, 'C') + R"("}}])"}) {
    auto files = ParseTreePage(page);
    ASSERT_FALSE(files.has_value()) << page;
    EXPECT_EQ(HubReasonOf(files.error()), HubReason::kMalformedAnswer) << files.error().message();
  }
}

TEST(ParseTreePage, AnLfsEntryWhoseSizesDisagreeIsAListingMismatch) {
  auto files = ParseTreePage(R"([{"type": "file", "path": "w.safetensors", "size": 10,
                                  "lfs": {"oid": ")" +
                             std::string(kSha) + R"(", "size": 11}}])");
  ASSERT_FALSE(files.has_value());
  EXPECT_EQ(HubReasonOf(files.error()), HubReason::kListingMismatch);
}

TEST(NextPageLink, FindsRelNextAmongOtherLinks) {
  EXPECT_EQ(
      NextPageLink(
          R"(<https://hub/api/models/a/b/tree/c?recursive=true&cursor=Mw%3D%3D>; rel="next")"),
      "https://hub/api/models/a/b/tree/c?recursive=true&cursor=Mw%3D%3D");
  EXPECT_EQ(NextPageLink(R"(<https://hub/p1>; rel="prev", <https://hub/p3>; REL=next)"),
            "https://hub/p3");
  EXPECT_EQ(NextPageLink(R"(<https://hub/p3>; title="x"; rel="last next")"), "https://hub/p3");
  EXPECT_EQ(NextPageLink(R"(<https://hub/p1>; rel="prev")"), std::nullopt);
  EXPECT_EQ(NextPageLink(""), std::nullopt);
  EXPECT_EQ(NextPageLink("<unterminated; rel=next"), std::nullopt);
}

}  // namespace
}  // namespace modelplane::core
