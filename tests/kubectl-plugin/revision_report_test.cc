#include "kubectl-plugin/revision_report.h"

#include <gtest/gtest.h>

#include "tests/kubectl-plugin/test_objects.h"

namespace modelplane::cli {
namespace {

using testing::FitsTerminal;
using testing::Lines;

std::string Render(const nlohmann::json& revision, const CacheListing& caches) {
  auto text = RenderRevisionStatus(revision, caches, testing::Now());
  EXPECT_TRUE(text) << text.error().ToString();
  return text ? *text : "";
}

// The table row of a node, or "" when none.
std::string NodeRowOf(const std::string& text, const std::string& node) {
  for (const std::string& line : Lines(text)) {
    if (line.starts_with(node + " ")) return line;
  }
  return "";
}

TEST(RevisionReportTest, ShowsPhaseDigestAndEachNodesStateTierAndBytesToReady) {
  nlohmann::json revision = testing::Revision();
  revision["status"] = testing::ReadyStatus();
  const std::string text = Render(revision, {.items = testing::ThreeCaches()});
  EXPECT_TRUE(FitsTerminal(text)) << text;
  EXPECT_NE(text.find("Revision:       team-a/llama-r2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Phase:          Staging\n"), std::string::npos);
  EXPECT_NE(text.find(std::string("Digest:         ") + testing::kDigest), std::string::npos);
  EXPECT_NE(text.find("Size:           140.0 GiB in 2 files"), std::string::npos);
  EXPECT_NE(text.find("1 ready, 1 failed"), std::string::npos);
  EXPECT_NE(text.find("p50 42.5s"), std::string::npos);
  EXPECT_NE(text.find("Age:            5m"), std::string::npos);

  const std::string ready = NodeRowOf(text, "gpu-a");
  EXPECT_NE(ready.find("Ready"), std::string::npos) << ready;
  EXPECT_NE(ready.find("peer"), std::string::npos) << ready;
  EXPECT_NE(ready.find("140.0 GiB (100%)"), std::string::npos) << ready;
  EXPECT_NE(ready.find("42.5s"), std::string::npos) << ready;
  EXPECT_NE(ready.find("prestage"), std::string::npos) << ready;

  const std::string staging = NodeRowOf(text, "gpu-b");
  EXPECT_NE(staging.find("Staging"), std::string::npos) << staging;
  EXPECT_NE(staging.find("objectStore"), std::string::npos) << staging;
  EXPECT_NE(staging.find("35.0 GiB (25%)"), std::string::npos) << staging;
  EXPECT_NE(staging.find("in-use"), std::string::npos) << staging;

  const std::string failed = NodeRowOf(text, "gpu-c");
  EXPECT_NE(failed.find("Failed"), std::string::npos) << failed;
  EXPECT_NE(text.find("gpu-c: InsufficientCapacity: needs 140.0 GiB"), std::string::npos) << text;

  EXPECT_EQ(NodeRowOf(text, "gpu-d"), "") << "a node that neither holds nor wants it is not listed";
  EXPECT_FALSE(text.ends_with("\n\n")) << "no blank last line when there are no notes: " << text;
}

// gpu-a holds the digest Ready for another namespace's copy only: for this revision it is still
// proving (no node proved its own sources), then Failed with the node's reason.
TEST(RevisionReportTest, AHolderReadsAsProvingUntilTheRevisionsOwnSourcesAreProven) {
  nlohmann::json revision = testing::Revision();
  revision["status"] = testing::ReadyStatus();
  std::vector<nlohmann::json> caches = testing::ThreeCaches();
  nlohmann::json& held = caches[0]["status"]["revisions"][0];
  held["sourceProofs"] = nlohmann::json::array(
      {{{"revision", {{"namespace", "team-b"}, {"name", "llama-r2"}}}, {"state", "Proven"}}});
  std::string text = Render(revision, {.items = caches});
  EXPECT_NE(NodeRowOf(text, "gpu-a").find("Staging"), std::string::npos) << text;
  EXPECT_NE(text.find("gpu-a: proving that the revision's own sources serve the bytes"),
            std::string::npos)
      << text;

  held["sourceProofs"].push_back({{"revision", {{"namespace", "team-a"}, {"name", "llama-r2"}}},
                                  {"state", "Failed"},
                                  {"reason", "PossessionNotProven"},
                                  {"message", "the revision's own sources did not serve it"}});
  text = Render(revision, {.items = caches});
  EXPECT_NE(NodeRowOf(text, "gpu-a").find("Failed"), std::string::npos) << text;
  EXPECT_NE(text.find("gpu-a: PossessionNotProven"), std::string::npos) << text;
}

TEST(RevisionReportTest, ShowsTheBytesEachTierServedAndTheOriginsShare) {
  nlohmann::json revision = testing::Revision();
  nlohmann::json status = testing::ReadyStatus();
  status["fetchedBytes"] = {
      {"byTier", {{"objectStore", 140 * testing::kGiB}, {"peer", 175 * testing::kGiB}}},
      {"originBytes", 140 * testing::kGiB},
      {"originBytesPerReplica", 70 * testing::kGiB}};
  revision["status"] = status;
  const std::string text = Render(revision, {.items = testing::ThreeCaches()});
  EXPECT_TRUE(FitsTerminal(text)) << text;
  EXPECT_EQ(
      testing::FieldValue(text, "Fetched"),
      "objectStore 140.0 GiB, peer 175.0 GiB; from origins 140.0 GiB, 70.0 GiB per Ready node")
      << text;
  EXPECT_EQ(text.find("unknown"), std::string::npos) << text;

  // Before any node is Ready the operator writes no share per replica.
  status["fetchedBytes"] = {{"byTier", {{"http", 3 * testing::kGiB}}},
                            {"originBytes", 3 * testing::kGiB},
                            {"originBytesPerReplica", 0}};
  revision["status"] = status;
  EXPECT_EQ(testing::FieldValue(Render(revision, {.items = testing::ThreeCaches()}), "Fetched"),
            "http 3.0 GiB; from origins 3.0 GiB");
}

TEST(RevisionReportTest, FetchedBytesAreUnknownUntilANodeReportsThem) {
  nlohmann::json revision = testing::Revision();
  revision["status"] = testing::ReadyStatus();
  const std::string text = Render(revision, {.items = testing::ThreeCaches()});
  EXPECT_EQ(testing::FieldValue(text, "Fetched"),
            "unknown (no node has reported where its bytes came from)")
      << text;
}

TEST(RevisionReportTest, BytesToReadyComesFromTheCacheWhenStatusHasNone) {
  nlohmann::json revision = testing::Revision();
  nlohmann::json status = testing::ReadyStatus();
  status["nodes"] = nlohmann::json::array();
  revision["status"] = status;
  const std::string text = Render(revision, {.items = testing::ThreeCaches()});
  EXPECT_NE(NodeRowOf(text, "gpu-a").find("42.5s"), std::string::npos) << text;
}

TEST(RevisionReportTest, SaysUnknownWhereStatusIsSilent) {
  nlohmann::json caches = testing::Cache(
      "gpu-a", nlohmann::json::array(),
      nlohmann::json::array({testing::CachedEntry(testing::kDigest, "Ready", 10, 10)}));
  nlohmann::json revision = testing::Revision();
  revision["status"] = {{"digest", testing::kDigest}, {"phase", "Ready"}};
  const std::string text = Render(revision, {.items = {caches}});
  const std::string row = NodeRowOf(text, "gpu-a");
  // Ready, but neither the revision's status nor the agent says which tier or how long.
  EXPECT_NE(row.find("unknown"), std::string::npos) << row;
  EXPECT_EQ(row.find("-  "), std::string::npos) << "no dash where a value is missing: " << row;
}

TEST(RevisionReportTest, ARevisionWithoutStatusSaysSo) {
  const std::string text = Render(testing::Revision(), {.items = {}});
  EXPECT_NE(text.find("Phase:          unknown (the operator has not written status)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Digest:         unknown"), std::string::npos);
  EXPECT_NE(text.find("No node holds this revision or is asked to."), std::string::npos);
}

TEST(RevisionReportTest, ANodeAskedButNotReportedIsRequested) {
  nlohmann::json cache = testing::Cache(
      "gpu-a",
      nlohmann::json::array({testing::SpecEntry("llama-r2", testing::kDigest, "prestage")}),
      nlohmann::json::array());
  const std::string text = Render(testing::Revision(), {.items = {cache}});
  EXPECT_NE(NodeRowOf(text, "gpu-a").find("Requested"), std::string::npos) << text;
  EXPECT_NE(text.find("gpu-a: the node agent has not reported it yet"), std::string::npos);
}

TEST(RevisionReportTest, UnlistableCachesFallBackToTheRevisionsStatus) {
  nlohmann::json revision = testing::Revision();
  revision["status"] = testing::ReadyStatus();
  const std::string text =
      Render(revision, {.unavailable = "not allowed to list modelcaches.modelplane.io"});
  EXPECT_NE(NodeRowOf(text, "gpu-a").find("unknown"), std::string::npos) << text;
  EXPECT_NE(NodeRowOf(text, "gpu-a").find("peer"), std::string::npos) << text;
  EXPECT_NE(text.find("ModelCaches could not be listed (not allowed"), std::string::npos) << text;
}

TEST(RevisionReportTest, ASignedRevisionShowsWhoTheOperatorVerified) {
  nlohmann::json revision = testing::Revision();
  revision["spec"]["signatures"] = nlohmann::json::array({{{"bundle", "{}"}}});
  const std::string unverified = Render(revision, {});
  EXPECT_NE(unverified.find("Signed-by:      unverified (1 signature; see the Valid condition)"),
            std::string::npos)
      << unverified;
  revision["status"] = {{"digest", testing::kDigest},
                        {"phase", "Ready"},
                        {"signedBy", nlohmann::json::array({{{"signer", "release-pki"},
                                                             {"publicKey", "sha256:ab"},
                                                             {"identity", "release@corp"}}})}};
  const std::string text = Render(revision, {});
  EXPECT_NE(text.find("Signed-by:      release-pki (release@corp, key sha256:ab)"),
            std::string::npos)
      << text;
  EXPECT_EQ(Render(testing::Revision(), {}).find("Signed-by"), std::string::npos);
}

TEST(RevisionReportTest, ARevokedRevisionShowsItsPurge) {
  nlohmann::json revision = testing::Revision();
  revision["spec"]["revoked"] = true;
  nlohmann::json status = testing::ReadyStatus();
  status["phase"] = "Revoked";
  status["purge"] = {
      {"nodesHolding", 2}, {"bytesHeld", 175 * testing::kGiB}, {"nodes", {"gpu-a", "gpu-b"}}};
  revision["status"] = status;
  const std::string text = Render(revision, {.items = testing::ThreeCaches()});
  EXPECT_NE(text.find("Revoked:        yes; purging: 2 nodes still hold 175.0 GiB (gpu-a, gpu-b)"),
            std::string::npos)
      << text;
  status["purge"] = {{"nodesHolding", 0}, {"bytesHeld", 0}};
  revision["status"] = status;
  EXPECT_NE(Render(revision, {}).find("purged: no node holds any of its bytes"), std::string::npos);
}

TEST(RevisionReportTest, LongNamesAndMessagesStillFitTheTerminal) {
  const std::string long_node(120, 'n');
  nlohmann::json failed = testing::CachedEntry(testing::kDigest, "Failed", 0, 10);
  failed["message"] = std::string(300, 'm');
  nlohmann::json revision = testing::Revision(std::string(200, 'r'));
  revision["status"] = testing::ReadyStatus();
  nlohmann::json cache = testing::Cache(long_node, nlohmann::json::array(), {failed});
  const std::string text = Render(revision, {.items = {cache}});
  EXPECT_TRUE(FitsTerminal(text)) << text;
}

TEST(RevisionReportTest, AMalformedCacheIsNamedAndLeftOut) {
  nlohmann::json bad = testing::Cache("gpu-x", nlohmann::json::array(), nlohmann::json::array());
  bad["status"]["usedBytes"] = "lots";
  const std::string text = Render(testing::Revision(), {.items = {bad}});
  EXPECT_NE(text.find("ModelCache gpu-x: "), std::string::npos) << text;
}

TEST(RevisionReportTest, SomethingElseIsAnError) {
  auto text = RenderRevisionStatus({{"kind", "Pod"}}, {}, testing::Now());
  EXPECT_FALSE(text);
}

}  // namespace
}  // namespace modelplane::cli
