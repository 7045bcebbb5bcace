// ModelScope's listing and revisions answers in its envelope, as e2e/hub/modelscope_handler.py
// writes them (held against the real modelscope client in tests/e2e/test_modelscope_server.py).
#include "core/hub/model_scope_answers.h"

#include <gtest/gtest.h>

#include "core/hub/hub_errors.h"

namespace modelplane::core {
namespace {

constexpr std::string_view kShaUpper =
    "ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789";
constexpr std::string_view kShaLower =
    "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789";

std::string Envelope(const std::string& data) {
  return R"({"Code": 200, "Data": )" + data +
         R"(, "Message": "success", "RequestId": "r", "Success": true})";
}

TEST(ParseModelScopeFiles, EveryFileWithItsSha256FoldersDropped) {
  auto files = ParseModelScopeFiles(Envelope(R"({"Files": [
    {"Path": "weights", "Name": "weights", "Type": "tree", "Size": 0, "Mode": "16384"},
    {"Path": "config.json", "Name": "config.json", "Type": "blob", "Size": 13,
     "Sha256": ")" + std::string(kShaLower) + R"(", "IsLFS": false},
    {"Path": "weights/model.safetensors", "Type": "blob", "Size": 5000,
     "Sha256": ")" + std::string(kShaUpper) + R"(", "IsLFS": true}]})"));
  ASSERT_TRUE(files.has_value()) << files.error().ToString();
  ASSERT_TRUE(files->has_value());
  ASSERT_EQ((*files)->size(), 2U);
  EXPECT_EQ(
      (**files)[0],
      (HubFile{.path = "config.json", .size = 13, .sha256 = std::string(kShaLower), .lfs = false}));
  EXPECT_EQ((**files)[1], (HubFile{.path = "weights/model.safetensors",
                                   .size = 5000,
                                   .sha256 = std::string(kShaLower),
                                   .lfs = true}));
}

TEST(ParseModelScopeFiles, NullFilesIsNoSuchRevision) {
  auto files = ParseModelScopeFiles(Envelope(R"({"Files": null})"));
  ASSERT_TRUE(files.has_value()) << files.error().ToString();
  EXPECT_FALSE(files->has_value());
}

TEST(ParseModelScopeFiles, RefusesWhatIsNotAListing) {
  for (const std::string& body :
       {std::string("[]"), std::string(R"({"Code": 10010205001, "Data": null, "Message": "x"})"),
        Envelope("{}"), Envelope(R"({"Files": {}})"),
        Envelope(R"({"Files": [{"Path": "a", "Size": 1}]})"),
        Envelope(R"({"Files": [{"Type": "blob", "Path": "a"}]})"),
        Envelope(R"({"Files": [{"Type": "blob", "Path": "a", "Size": 1, "Sha256": "abc"}]})")}) {
    auto files = ParseModelScopeFiles(body);
    ASSERT_FALSE(files.has_value()) << body;
    EXPECT_EQ(HubReasonOf(files.error()), HubReason::kMalformedAnswer) << files.error().message();
  }
}

TEST(CommitOfModelScopeRevision, BranchesAndTagsNameTheirCommits) {
  const std::string commit(40, 'a');
  const std::string tagged(40, 'b');
  const std::string body = Envelope(R"({"RevisionMap": {
    "Branches": [{"Revision": "master", "CommitId": ")" +
                                    commit + R"(", "CreatedAt": 1}],
    "Tags": [{"Revision": "v1.0", "CommitId": ")" +
                                    tagged + R"(", "CreatedAt": 2}]}})");
  EXPECT_EQ(CommitOfModelScopeRevision(body, "master").value(), commit);
  EXPECT_EQ(CommitOfModelScopeRevision(body, "v1.0").value(), tagged);
  EXPECT_EQ(CommitOfModelScopeRevision(body, "v2").value(), std::nullopt);
}

TEST(CommitOfModelScopeRevision, ARevisionWithoutItsCommitIsMalformed) {
  auto commit = CommitOfModelScopeRevision(
      Envelope(R"({"RevisionMap": {"Branches": [{"Revision": "master", "CreatedAt": 1}]}})"),
      "master");
  ASSERT_FALSE(commit.has_value());
  EXPECT_EQ(HubReasonOf(commit.error()), HubReason::kMalformedAnswer);
  EXPECT_FALSE(CommitOfModelScopeRevision(Envelope("[]"), "master").has_value());
}

}  // namespace
}  // namespace modelplane::core
