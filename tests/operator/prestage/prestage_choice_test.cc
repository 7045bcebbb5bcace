// Placement rules (operator/prestage/prestage_choice.h): selector, eligibility, room, stability,
// zone spread and preference, each with a case that fails if the rule is broken.
#include "operator/prestage/prestage_choice.h"

#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using Names = std::vector<std::string>;

constexpr std::int64_t kGiB = 1LL << 30;

PrestageCandidate Node(std::string name, std::string zone, std::int64_t capacity = 0,
                       std::int64_t used = 0) {
  PrestageCandidate candidate{.name = std::move(name),
                              .labels = {{"pool", "gpu"}},
                              .ready = true,
                              .capacity_bytes = capacity,
                              .used_bytes = used};
  if (!zone.empty()) candidate.labels[std::string(kZoneLabel)] = std::move(zone);
  return candidate;
}

PrestageRequest Want(int nodes, std::int64_t bytes = kGiB) {
  return {.node_selector = {{"pool", "gpu"}}, .nodes = nodes, .total_bytes = bytes};
}

TEST(PrestageChoiceTest, SelectorMustMatchEveryLabel) {
  EXPECT_TRUE(MatchesSelector({}, {{"a", "1"}}));
  EXPECT_TRUE(MatchesSelector({{"a", "1"}}, {{"a", "1"}, {"b", "2"}}));
  EXPECT_FALSE(MatchesSelector({{"a", "1"}}, {{"a", "2"}}));
  EXPECT_FALSE(MatchesSelector({{"a", "1"}, {"b", "2"}}, {{"a", "1"}}));
}

// A candidate keeps only the labels placement reads, and choosing from those gives the same
// nodes as choosing from every label the nodes carry.
TEST(PrestageChoiceTest, CandidatesKeepTheZoneAndTheSelectorsKeysOnly) {
  const std::map<std::string, std::string> labels = {{"kubernetes.io/hostname", "a-1"},
                                                     {"pool", "gpu"},
                                                     {"gpu.product", "H200"},
                                                     {std::string(kZoneLabel), "zone-a"}};
  EXPECT_EQ(
      LabelsPrestageReads(labels, {{"pool", "gpu"}, {"absent", "x"}}),
      (std::map<std::string, std::string>{{"pool", "gpu"}, {std::string(kZoneLabel), "zone-a"}}));
  EXPECT_EQ(LabelsPrestageReads(labels, {}),
            (std::map<std::string, std::string>{{std::string(kZoneLabel), "zone-a"}}));
  EXPECT_TRUE(LabelsPrestageReads({{"pool", "gpu"}}, {}).empty());

  std::vector<PrestageCandidate> full = {Node("a-1", "zone-a"), Node("a-2", "zone-a"),
                                         Node("b-1", "zone-b"), Node("c-1", "")};
  full[1].labels["pool"] = "cpu";
  for (PrestageCandidate& node : full) node.labels["kubernetes.io/hostname"] = node.name;
  std::vector<PrestageCandidate> kept = full;
  for (PrestageCandidate& node : kept) {
    node.labels = LabelsPrestageReads(node.labels, Want(1).node_selector);
  }
  for (int wanted = 1; wanted <= 4; ++wanted) {
    EXPECT_EQ(ChoosePrestageNodes(Want(wanted), kept).chosen,
              ChoosePrestageNodes(Want(wanted), full).chosen);
  }
}

TEST(PrestageChoiceTest, ZeroNodesChoosesNone) {
  EXPECT_TRUE(ChoosePrestageNodes(Want(0), {Node("n1", "a")}).chosen.empty());
}

TEST(PrestageChoiceTest, SpreadsAcrossZonesRoundRobin) {
  // Four nodes, two zones; the names alone would pick a-1 and a-2.
  const std::vector<PrestageCandidate> nodes = {Node("a-1", "zone-a"), Node("a-2", "zone-a"),
                                                Node("b-1", "zone-b"), Node("b-2", "zone-b")};
  EXPECT_EQ(ChoosePrestageNodes(Want(2), nodes).chosen, (Names{"a-1", "b-1"}));
  EXPECT_EQ(ChoosePrestageNodes(Want(3), nodes).chosen, (Names{"a-1", "a-2", "b-1"}));
  EXPECT_EQ(ChoosePrestageNodes(Want(4), nodes).chosen, (Names{"a-1", "a-2", "b-1", "b-2"}));
  // Asking for more than there are gives every eligible node.
  EXPECT_EQ(ChoosePrestageNodes(Want(9), nodes).chosen.size(), 4u);
}

TEST(PrestageChoiceTest, ExcludesUnmatchedNotReadyCordonedAndFullNodes) {
  std::vector<PrestageCandidate> nodes = {Node("ok", "z"), Node("other-pool", "z"),
                                          Node("not-ready", "z"), Node("cordoned", "z"),
                                          Node("full", "z", 10 * kGiB, 9 * kGiB + 1)};
  nodes[1].labels["pool"] = "cpu";
  nodes[2].ready = false;
  nodes[3].unschedulable = true;
  const PrestageChoice result = ChoosePrestageNodes(Want(5), nodes);
  EXPECT_EQ(result.chosen, (Names{"ok"}));
  EXPECT_EQ(result.ineligible, 3);  // other-pool does not match, so it is not counted
}

TEST(PrestageChoiceTest, RoomCountsUsedAndReservedBytes) {
  PrestageCandidate exact = Node("exact", "z", 10 * kGiB, 8 * kGiB);
  exact.reserved_bytes = kGiB;  // exactly 1 GiB left
  PrestageCandidate short_by_one = Node("short", "z", 10 * kGiB, 8 * kGiB);
  short_by_one.reserved_bytes = kGiB + 1;
  EXPECT_EQ(ChoosePrestageNodes(Want(2), {exact, short_by_one}).chosen, (Names{"exact"}));
}

TEST(PrestageChoiceTest, BytesPromisedToOtherRevisionsAreNotFree) {
  // 10 GiB free by the agent's numbers, but 9.5 GiB already promised to other revisions.
  PrestageCandidate promised = Node("promised", "z", 10 * kGiB);
  promised.assigned_bytes = 9 * kGiB + kGiB / 2;
  PrestageCandidate other = Node("other", "z", 5 * kGiB);
  EXPECT_EQ(ChoosePrestageNodes(Want(1), {promised, other}).chosen, (Names{"other"}));
  EXPECT_EQ(ChoosePrestageNodes(Want(2), {promised, other}).chosen, (Names{"other"}));
}

TEST(PrestageChoiceTest, FewerEntriesWinAmongUnknownCapacities) {
  PrestageCandidate busy = Node("a-busy", "z");
  busy.assigned_entries = 7;
  EXPECT_EQ(ChoosePrestageNodes(Want(1), {busy, Node("b-idle", "z")}).chosen, (Names{"b-idle"}));
}

TEST(PrestageChoiceTest, UnknownCapacityIsEligibleButRanksAfterKnownRoom) {
  const std::vector<PrestageCandidate> nodes = {Node("a-unknown", "z"),
                                                Node("b-known", "z", 100 * kGiB)};
  EXPECT_EQ(ChoosePrestageNodes(Want(1), nodes).chosen, (Names{"b-known"}));
  EXPECT_EQ(ChoosePrestageNodes(Want(2), nodes).chosen, (Names{"a-unknown", "b-known"}));
}

TEST(PrestageChoiceTest, PrefersReadyThenStagingThenMostFreeSpace) {
  PrestageCandidate roomy = Node("roomy", "z", 1000 * kGiB);
  PrestageCandidate tight = Node("tight", "z", 10 * kGiB);
  PrestageCandidate staging = Node("staging", "z", 10 * kGiB);
  staging.held = HeldState::kStaging;
  PrestageCandidate ready = Node("ready", "z", 10 * kGiB, 10 * kGiB);  // full, but holds it
  ready.held = HeldState::kReady;
  const std::vector<PrestageCandidate> nodes = {roomy, tight, staging, ready};
  EXPECT_EQ(ChoosePrestageNodes(Want(1), nodes).chosen, (Names{"ready"}));
  EXPECT_EQ(ChoosePrestageNodes(Want(2), nodes).chosen, (Names{"ready", "staging"}));
  EXPECT_EQ(ChoosePrestageNodes(Want(3), nodes).chosen, (Names{"ready", "roomy", "staging"}));
}

TEST(PrestageChoiceTest, KeepsCurrentNodesEvenWhenBetterOnesAppear) {
  // b-1 was chosen earlier and is staging; a roomier node in a fresh zone must not displace it.
  PrestageCandidate current = Node("b-1", "zone-b", 10 * kGiB);
  current.currently_chosen = true;
  current.held = HeldState::kStaging;
  const std::vector<PrestageCandidate> nodes = {current, Node("a-1", "zone-a", 1000 * kGiB),
                                                Node("c-1", "zone-c", 1000 * kGiB)};
  EXPECT_EQ(ChoosePrestageNodes(Want(1), nodes).chosen, (Names{"b-1"}));
  // Growing the count adds new nodes next to the kept one, spreading from its zone.
  EXPECT_EQ(ChoosePrestageNodes(Want(2), nodes).chosen, (Names{"a-1", "b-1"}));
}

TEST(PrestageChoiceTest, KeepsACurrentNodeThatHoldsItEvenIfNoLongerEligible) {
  PrestageCandidate current = Node("n1", "z", 10 * kGiB, 10 * kGiB);
  current.currently_chosen = true;
  current.held = HeldState::kReady;
  current.ready = false;  // NotReady for a moment: moving a ready copy would cost a download
  EXPECT_EQ(ChoosePrestageNodes(Want(1), {current, Node("n2", "z")}).chosen, (Names{"n1"}));
}

TEST(PrestageChoiceTest, DropsACurrentNodeThatNoLongerMatchesOrCannotStage) {
  PrestageCandidate moved = Node("n1", "z");
  moved.currently_chosen = true;
  moved.labels["pool"] = "cpu";  // the selector changed under it
  PrestageCandidate cordoned = Node("n2", "z");
  cordoned.currently_chosen = true;
  cordoned.unschedulable = true;  // nothing staged there yet
  EXPECT_EQ(
      ChoosePrestageNodes(Want(2), {moved, cordoned, Node("n3", "z"), Node("n4", "z")}).chosen,
      (Names{"n3", "n4"}));
}

TEST(PrestageChoiceTest, ShrinkingKeepsTheMostPreferredCurrentNodes) {
  std::vector<PrestageCandidate> nodes;
  for (const char* name : {"a-1", "a-2", "b-1"}) {
    PrestageCandidate node = Node(name, std::string("zone-") + name[0], 10 * kGiB);
    node.currently_chosen = true;
    node.held = HeldState::kStaging;
    nodes.push_back(node);
  }
  nodes[1].held = HeldState::kReady;  // a-2 is ready: it stays, and the spread keeps b-1
  EXPECT_EQ(ChoosePrestageNodes(Want(2), nodes).chosen, (Names{"a-2", "b-1"}));
}

TEST(PrestageChoiceTest, NodesWithoutZoneFormTheirOwnGroup) {
  const std::vector<PrestageCandidate> nodes = {Node("a-1", "zone-a"), Node("a-2", "zone-a"),
                                                Node("x", "")};
  EXPECT_EQ(ChoosePrestageNodes(Want(2), nodes).chosen, (Names{"a-1", "x"}));
}

TEST(PrestageChoiceTest, DeterministicWhateverTheInputOrder) {
  constexpr int kNodes = 12;
  std::vector<PrestageCandidate> nodes;
  nodes.reserve(kNodes);
  for (int i = 0; i < kNodes; ++i) {
    nodes.push_back(
        Node("n" + std::to_string(i), "zone-" + std::to_string(i % 3), 100 * kGiB, (i % 4) * kGiB));
  }
  const Names expected = ChoosePrestageNodes(Want(5), nodes).chosen;
  ASSERT_EQ(expected.size(), 5u);
  std::reverse(nodes.begin(), nodes.end());
  EXPECT_EQ(ChoosePrestageNodes(Want(5), nodes).chosen, expected);
  std::rotate(nodes.begin(), nodes.begin() + 5, nodes.end());
  EXPECT_EQ(ChoosePrestageNodes(Want(5), nodes).chosen, expected);
}

}  // namespace
}  // namespace modelplane::controller

namespace modelplane::controller {
namespace {

TEST(PrestageChoiceTest, PrefersNodesThatHoldTheFilesThroughAnotherRevision) {
  // The new user's case: a second revision that shares every file with a Ready one must go to
  // the nodes that hold those files, not to the one that holds none.
  PrestageCandidate empty = Node("n0", "a", 100 * kGiB);
  PrestageCandidate holder = Node("n1", "a", 100 * kGiB, 50 * kGiB);
  holder.held_bytes = kGiB;
  EXPECT_EQ(ChoosePrestageNodes(Want(1), {empty, holder}).chosen, Names{"n1"});
}

TEST(PrestageChoiceTest, FilesAlreadyHeldNeedNoRoom) {
  PrestageCandidate almost_full = Node("n0", "a", 10 * kGiB, 9 * kGiB);
  EXPECT_TRUE(ChoosePrestageNodes(Want(1, 4 * kGiB), {almost_full}).chosen.empty());
  almost_full.held_bytes = 3 * kGiB;
  EXPECT_EQ(ChoosePrestageNodes(Want(1, 4 * kGiB), {almost_full}).chosen, Names{"n0"});
}

}  // namespace
}  // namespace modelplane::controller
