#include "operator/controllers/peer_choice.h"

#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

PeerHolder Holder(const std::string& node, std::string zone, bool ready,
                  std::vector<std::string> files = {}) {
  return {.node = node,
          .endpoint = node + ":9443",
          .zone = std::move(zone),
          .ready = ready,
          .files = std::move(files)};
}

std::vector<std::string> Nodes(const std::vector<core::api::PeerSource>& peers) {
  std::vector<std::string> nodes;
  nodes.reserve(peers.size());
  for (const auto& peer : peers) nodes.push_back(peer.node);
  return nodes;
}

TEST(PeerChoiceTest, ZoneReadyFirstThenZoneStagingThenReadyElsewhereNeverStagingElsewhere) {
  const auto peers = ChoosePeers("n0", "a",
                                 {Holder("far-ready", "b", true), Holder("far-staging", "b", false),
                                  Holder("near-staging", "a", false),
                                  Holder("near-ready", "a", true), Holder("n0", "a", true)});
  EXPECT_THAT(Nodes(peers), ElementsAre("near-ready", "near-staging", "far-ready"));
  EXPECT_EQ(peers[0].state, core::api::kPeerStateReady);
  EXPECT_EQ(peers[1].state, core::api::kPeerStateStaging);
  EXPECT_EQ(peers[0].endpoint, "near-ready:9443");
}

TEST(PeerChoiceTest, HoldersWithoutAnEndpointAreLeftOut) {
  PeerHolder silent = Holder("silent", "a", true);
  silent.endpoint.clear();
  EXPECT_THAT(ChoosePeers("n0", "a", {silent}), IsEmpty());
}

TEST(PeerChoiceTest, AtMostTheLimitAndDifferentNodesSpreadOverTheHolders) {
  std::vector<PeerHolder> holders;
  holders.reserve(100);
  for (int i = 0; i < 100; ++i) holders.push_back(Holder("h" + std::to_string(i), "a", true));
  std::set<std::string> first_choices;
  for (int i = 0; i < 50; ++i) {
    const auto peers = ChoosePeers("reader" + std::to_string(i), "a", holders, {}, 4);
    ASSERT_EQ(peers.size(), 4u);
    first_choices.insert(peers[0].node);
  }
  // One shared ordering would send all fifty readers to one holder first.
  EXPECT_GT(first_choices.size(), 20u);
}

TEST(PeerChoiceTest, AHolderBecomingReadyMovesUpWithoutReshufflingTheOthers) {
  std::vector<PeerHolder> holders = {Holder("a1", "a", true), Holder("a2", "a", true),
                                     Holder("a3", "a", false)};
  const auto before = ChoosePeers("n0", "a", holders);
  holders[2].ready = true;
  const auto after = ChoosePeers("n0", "a", holders);
  std::vector<std::string> ready_before = {before[0].node, before[1].node};
  std::vector<std::string> ready_after;
  for (const auto& peer : after) {
    if (peer.node != "a3") ready_after.push_back(peer.node);
  }
  EXPECT_EQ(ready_before, ready_after);  // the others keep their relative order
  // The same input gives the same choice: nothing to rewrite when nothing changed.
  EXPECT_EQ(ChoosePeers("n0", "a", holders), after);
}

TEST(PeerChoiceTest, ListedPeersStayWhenNewHoldersOfTheSameClassHashHigher) {
  std::vector<PeerHolder> holders;
  holders.reserve(104);
  for (int i = 0; i < 4; ++i) holders.push_back(Holder("first" + std::to_string(i), "a", true));
  const auto before = ChoosePeers("n0", "a", holders, {}, 4);
  ASSERT_EQ(before.size(), 4u);
  for (int i = 0; i < 100; ++i) holders.push_back(Holder("later" + std::to_string(i), "a", true));
  // Chosen afresh, some of the hundred would hash higher than the first four.
  EXPECT_NE(ChoosePeers("n0", "a", holders, {}, 4), before);
  // With the list the entry holds, nothing moves.
  EXPECT_EQ(ChoosePeers("n0", "a", holders, before, 4), before);
  // A listed peer that is gone frees its place for the best of the rest.
  holders.erase(holders.begin());
  const auto after = ChoosePeers("n0", "a", holders, before, 4);
  ASSERT_EQ(after.size(), 4u);
  int kept = 0;
  for (const auto& peer : after) kept += peer.node.starts_with("first") ? 1 : 0;
  EXPECT_EQ(kept, 3);
}

TEST(PeerChoiceTest, ABetterClassDisplacesListedPeers) {
  std::vector<PeerHolder> holders = {Holder("far1", "b", true), Holder("far2", "b", true)};
  const auto before = ChoosePeers("n0", "a", holders, {}, 2);
  holders.push_back(Holder("near1", "a", true));
  holders.push_back(Holder("near2", "a", true));
  EXPECT_THAT(Nodes(ChoosePeers("n0", "a", holders, before, 2)),
              ::testing::UnorderedElementsAre("near1", "near2"));
}

TEST(PeerChoiceTest, AHolderListedWholeAndThroughAnotherRevisionKeepsTheWholeEntry) {
  const std::string file = "sha256:" + std::string(64, 'a');
  const auto peers = ChoosePeers(
      "n0", "a",
      {Holder("h1", "a", true, {file}), Holder("h1", "a", true), Holder("h2", "a", true, {file})});
  ASSERT_EQ(peers.size(), 2u);
  for (const auto& peer : peers) {
    if (peer.node == "h1") {
      EXPECT_THAT(peer.files, IsEmpty());
    } else {
      EXPECT_THAT(peer.files, ElementsAre(file));
    }
  }
}

}  // namespace
}  // namespace modelplane::controller
