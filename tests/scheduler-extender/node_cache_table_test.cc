// NodeCacheTable against a std::map model: random upserts, replacements and removals (which
// exercise probing runs, wrap-around and backward-shift deletion as the table fills and grows)
// must leave every name findable, one at a time and many at once.
#include "scheduler-extender/node_cache_table.h"

#include <functional>
#include <map>
#include <random>

#include <gtest/gtest.h>

namespace modelplane::extender {
namespace {

std::shared_ptr<const NodeCacheInfo> Snapshot(const std::string& node, std::int64_t capacity) {
  return std::make_shared<const NodeCacheInfo>(
      NodeCacheInfo{.node = node, .capacity_bytes = capacity});
}

TEST(NodeCacheTableTest, AnEmptyTableFindsNothing) {
  NodeCacheTable table;
  EXPECT_EQ(table.Find("gpu-node-0"), nullptr);
  table.Remove("gpu-node-0");
  const std::vector<std::string> names = {"a", "b"};
  EXPECT_EQ(table.FindMany(names), (std::vector<std::shared_ptr<const NodeCacheInfo>>(2)));
  EXPECT_EQ(table.size(), 0u);
}

TEST(NodeCacheTableTest, UpsertReplacesTheSnapshotOfTheSameNode) {
  NodeCacheTable table;
  table.Upsert(Snapshot("gpu-node-0", 1));
  table.Upsert(Snapshot("gpu-node-0", 2));
  EXPECT_EQ(table.size(), 1u);
  ASSERT_NE(table.Find("gpu-node-0"), nullptr);
  EXPECT_EQ(table.Find("gpu-node-0")->capacity_bytes, 2);
  table.Upsert(nullptr);
  EXPECT_EQ(table.size(), 1u);
}

TEST(NodeCacheTableTest, AgreesWithAMapThroughRandomUpsertsAndRemovals) {
  NodeCacheTable table;
  std::map<std::string, std::int64_t> model;
  std::mt19937_64 random(20261203);
  // 700 names in 20,000 steps: the table grows through several sizes, and removals land in
  // the middle of probing runs.
  std::uniform_int_distribution<int> pick_name(0, 699);
  std::uniform_int_distribution<int> pick_action(0, 2);
  for (int step = 0; step < 20'000; ++step) {
    const std::string name = "gpu-node-" + std::to_string(pick_name(random));
    if (pick_action(random) == 0) {
      table.Remove(name);
      model.erase(name);
    } else {
      table.Upsert(Snapshot(name, step));
      model[name] = step;
    }
    if (step % 1000 != 999) continue;
    ASSERT_EQ(table.size(), model.size()) << "step " << step;
    std::vector<std::string> names;
    names.reserve(700);
    for (int index = 0; index < 700; ++index) names.push_back("gpu-node-" + std::to_string(index));
    const auto found = table.FindMany(names);
    ASSERT_EQ(found.size(), names.size());
    for (std::size_t index = 0; index < names.size(); ++index) {
      const auto expected = model.find(names[index]);
      const auto single = table.Find(names[index]);
      if (expected == model.end()) {
        EXPECT_EQ(found[index], nullptr) << names[index] << " at step " << step;
        EXPECT_EQ(single, nullptr) << names[index] << " at step " << step;
      } else {
        ASSERT_NE(found[index], nullptr) << names[index] << " at step " << step;
        EXPECT_EQ(found[index]->capacity_bytes, expected->second) << names[index];
        EXPECT_EQ(single, found[index]);
      }
    }
  }
}

// Names chosen by their hash so that a probing run wraps from the table's last slot to its
// first (a new table has 64 slots): removing the run's head must shift the wrapped entries back
// across the end, or they can no longer be found.
TEST(NodeCacheTableTest, RemovalShiftsARunThatWrapsAroundTheEnd) {
  constexpr std::size_t kSlots = 64;
  auto names_at_home = [](std::size_t home, std::size_t count) {
    std::vector<std::string> names;
    for (int index = 0; names.size() < count; ++index) {
      std::string name = "node-" + std::to_string(index);
      if ((std::hash<std::string>{}(name) & (kSlots - 1)) == home) names.push_back(name);
    }
    return names;
  };
  const auto last = names_at_home(kSlots - 1, 3);  // they go to slots 63, 0 and 1
  NodeCacheTable table;
  for (const auto& name : last) table.Upsert(Snapshot(name, 1));
  table.Remove(last[0]);  // both others move back one slot, the first across the end
  EXPECT_EQ(table.Find(last[0]), nullptr);
  EXPECT_NE(table.Find(last[1]), nullptr);
  EXPECT_NE(table.Find(last[2]), nullptr);

  // A name at home in slot 0 behind the wrapped ones moves into the hole they leave.
  const auto first = names_at_home(0, 1);
  table.Upsert(Snapshot(first[0], 2));  // slots: 63 last[1], 0 last[2], 1 first[0]
  table.Remove(last[1]);
  EXPECT_NE(table.Find(last[2]), nullptr);
  EXPECT_NE(table.Find(first[0]), nullptr);
  EXPECT_EQ(table.size(), 2u);

  // One at home in slot 0 stays there when the hole is at the end: moving it back across the
  // end would put it before its home.
  NodeCacheTable two;
  two.Upsert(Snapshot(last[0], 1));   // slot 63
  two.Upsert(Snapshot(first[0], 2));  // slot 0
  two.Remove(last[0]);
  EXPECT_NE(two.Find(first[0]), nullptr);
}

TEST(NodeCacheTableTest, FindManyKeepsTheRequestsOrderAndRepeats) {
  NodeCacheTable table;
  for (int index = 0; index < 50; ++index) {
    table.Upsert(Snapshot("gpu-node-" + std::to_string(index), index));
  }
  const std::vector<std::string> names = {"gpu-node-7", "missing", "gpu-node-7", "gpu-node-49", ""};
  const auto found = table.FindMany(names);
  ASSERT_EQ(found.size(), 5u);
  ASSERT_NE(found[0], nullptr);
  EXPECT_EQ(found[0]->capacity_bytes, 7);
  EXPECT_EQ(found[1], nullptr);
  EXPECT_EQ(found[2], found[0]);
  ASSERT_NE(found[3], nullptr);
  EXPECT_EQ(found[3]->capacity_bytes, 49);
  EXPECT_EQ(found[4], nullptr);
}

}  // namespace
}  // namespace modelplane::extender
