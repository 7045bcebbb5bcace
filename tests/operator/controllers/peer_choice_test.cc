#include "operator/controllers/peer_choice.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <tuple>
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

// The choice as it was first written: every holder ranked for every node. PeerChoice must
// choose exactly the same lists, only without ranking the zone when a list holds.
std::uint64_t ReferenceHash(std::string_view a, std::string_view b) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const std::string_view text : {a, std::string_view("\0", 1), b}) {
    for (const char c : text) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 1099511628211ULL;
    }
  }
  return hash;
}

std::vector<std::string> RankEveryHolder(const std::string& node, const std::string& zone,
                                         const std::vector<PeerHolder>& holders,
                                         const std::vector<core::api::PeerSource>& previous,
                                         std::size_t limit) {
  struct Ranked {
    int rank;
    std::uint64_t score;
    const PeerHolder* holder;
  };
  std::vector<Ranked> ranked;
  for (const PeerHolder& holder : holders) {
    if (holder.node == node || holder.endpoint.empty()) continue;
    const bool nearby = holder.zone == zone;
    if (!holder.ready && !nearby) continue;
    ranked.push_back(
        {holder.ready ? (nearby ? 0 : 2) : 1, ReferenceHash(node, holder.node), &holder});
  }
  std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    return std::tuple(a.holder->node, a.rank) < std::tuple(b.holder->node, b.rank);
  });
  ranked.erase(std::unique(ranked.begin(), ranked.end(),
                           [](const Ranked& a, const Ranked& b) {
                             return a.holder->node == b.holder->node;
                           }),
               ranked.end());
  const auto better = [](const Ranked& a, const Ranked& b) {
    return std::tuple(a.rank, b.score, a.holder->node) <
           std::tuple(b.rank, a.score, b.holder->node);
  };
  std::sort(ranked.begin(), ranked.end(), better);
  if (ranked.size() > limit) {
    const int worst_rank = ranked[limit - 1].rank;
    const auto group = [](int rank) { return rank == 2 ? 1 : 0; };  // the zone, or elsewhere
    std::set<std::string> listed;
    for (const core::api::PeerSource& peer : previous) listed.insert(peer.node);
    std::vector<Ranked> kept;
    std::vector<Ranked> rest;
    for (const Ranked& item : ranked) {
      const bool stays =
          listed.contains(item.holder->node) && group(item.rank) <= group(worst_rank);
      (stays && kept.size() < limit ? kept : rest).push_back(item);
    }
    for (const Ranked& item : rest) {
      if (kept.size() >= limit) break;
      kept.push_back(item);
    }
    std::sort(kept.begin(), kept.end(), better);
    ranked = std::move(kept);
  }
  std::vector<std::string> chosen;
  for (const Ranked& item : ranked) {
    if (chosen.size() >= limit) break;
    chosen.push_back(item.holder->node);
  }
  return chosen;
}

TEST(PeerChoiceTest, ChoosesWhatRankingEveryHolderChoosesOverARollout) {
  std::mt19937 random(7);
  const std::vector<std::string> zones{"a", "b", "c"};
  for (int round = 0; round < 40; ++round) {
    const std::size_t limit = 1 + random() % 6;
    const int nodes = 5 + static_cast<int>(random() % 40);
    std::vector<PeerHolder> holders;
    for (int index = 0; index < nodes; ++index) {
      if (random() % 4 == 0) continue;  // not a holder (yet)
      holders.push_back(
          Holder("h" + std::to_string(index), zones[random() % zones.size()], random() % 3 == 0));
      if (random() % 10 == 0) holders.back().endpoint.clear();
    }
    std::vector<core::api::PeerSource> previous;
    // A node's list over several passes, holders moving to Ready between them.
    for (int pass = 0; pass < 4; ++pass) {
      const std::string reader = "h" + std::to_string(round % nodes);
      const std::string& zone = zones[static_cast<std::size_t>(round) % zones.size()];
      const PeerChoice fresh(holders);
      const auto peers = fresh.Choose(reader, zone, previous, limit);
      ASSERT_EQ(Nodes(peers), RankEveryHolder(reader, zone, holders, previous, limit))
          << "round " << round << " pass " << pass;
      previous = peers;
      for (PeerHolder& holder : holders) {
        if (random() % 3 == 0) holder.ready = true;
      }
    }
  }
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

TEST(PeerChoiceTest, ListedStagingPeersOfTheZoneStayWhenReadyOnesOutnumberTheList) {
  // The first Ready holders of a zone must not take over every list: the readers would all
  // read from them while later holders served no one.
  std::vector<PeerHolder> holders;
  holders.reserve(60);
  for (int i = 0; i < 50; ++i) holders.push_back(Holder("s" + std::to_string(i), "a", false));
  const auto before = ChoosePeers("n0", "a", holders, {}, 4);
  ASSERT_EQ(before.size(), 4u);
  for (int i = 0; i < 10; ++i) holders.push_back(Holder("r" + std::to_string(i), "a", true));
  const auto after = ChoosePeers("n0", "a", holders, before, 4);
  std::vector<std::string> listed = Nodes(before);
  std::vector<std::string> kept = Nodes(after);
  std::sort(listed.begin(), listed.end());
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(listed, kept);
  // A new list takes the Ready ones first.
  for (const auto& peer : ChoosePeers("n1", "a", holders, {}, 4)) {
    EXPECT_EQ(peer.state, core::api::kPeerStateReady);
  }
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
