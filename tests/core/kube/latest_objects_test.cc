#include "core/kube/latest_objects.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

using nlohmann::json;

ObjectPtr Cache(const std::string& name, const std::string& version, int marker = 0) {
  return std::make_shared<const json>(
      json{{"metadata", {{"name", name}, {"resourceVersion", version}}}, {"marker", marker}});
}

TEST(LatestObjectsTest, AnAnswerNewerThanTheInformerIsWhatWritersStartFrom) {
  LatestObjects latest;
  latest.Remember(*Cache("node-1", "12", 2));
  const ObjectPtr newest = latest.Newest(Cache("node-1", "11", 1));
  ASSERT_NE(newest, nullptr);
  EXPECT_EQ((*newest)["marker"], 2);
  EXPECT_EQ(latest.RememberedCount(), 1u);
}

TEST(LatestObjectsTest, OnceTheInformerHasCaughtUpItsCopyWinsAndTheAnswerIsDropped) {
  LatestObjects latest;
  latest.Remember(*Cache("node-1", "12", 2));
  EXPECT_EQ((*latest.Newest(Cache("node-1", "12", 3)))["marker"], 3);
  EXPECT_EQ(latest.RememberedCount(), 0u);
  // Observing the informer drops answers for objects nobody reads again.
  latest.Remember(*Cache("node-2", "20"));
  latest.Observe(*Cache("node-2", "19"));
  EXPECT_EQ(latest.RememberedCount(), 1u);
  latest.Observe(*Cache("node-2", "21"));
  EXPECT_EQ(latest.RememberedCount(), 0u);
}

TEST(LatestObjectsTest, AnOlderAnswerNeverReplacesANewerOne) {
  LatestObjects latest;
  latest.Remember(*Cache("node-1", "30", 30));
  latest.Remember(*Cache("node-1", "29", 29));  // a slow answer that arrives second
  EXPECT_EQ((*latest.Newest(Cache("node-1", "1")))["marker"], 30);
}

TEST(LatestObjectsTest, VersionsThatDoNotCompareLeaveTheInformerInCharge) {
  LatestObjects latest;
  latest.Remember(*Cache("node-1", "opaque-b", 2));
  EXPECT_EQ(latest.RememberedCount(), 0u);
  latest.Remember(*Cache("node-1", "40", 2));
  EXPECT_EQ((*latest.Newest(Cache("node-1", "opaque-a", 1)))["marker"], 1);
  EXPECT_EQ(latest.RememberedCount(), 0u);
}

TEST(LatestObjectsTest, WhatTheInformerNoLongerHoldsIsNotResurrected) {
  LatestObjects latest;
  latest.Remember(*Cache("node-1", "50"));
  EXPECT_EQ(latest.Newest(nullptr), nullptr);
  latest.Forget("node-1");
  EXPECT_EQ(latest.RememberedCount(), 0u);
  EXPECT_EQ((*latest.Newest(Cache("node-1", "3", 3)))["marker"], 3);
}

TEST(LatestObjectsTest, WritersOfOneObjectTakeTurnsAndOthersDoNot) {
  LatestObjects latest;
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  std::vector<std::thread> writers;
  writers.reserve(4);
  for (int i = 0; i < 4; ++i) {
    writers.emplace_back([&] {
      for (int round = 0; round < 25; ++round) {
        const auto turn = latest.LockWriters("node-1");
        const int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        // Long enough that writers without turns would overlap (4 threads, 2 cores).
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --inside;
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  EXPECT_EQ(most.load(), 1);
  // Another object's turn is free while one is held.
  const auto held = latest.LockWriters("node-1");
  std::atomic<bool> got_other{false};
  std::thread other([&] {
    const auto turn = latest.LockWriters("node-2");
    got_other = true;
  });
  other.join();
  EXPECT_TRUE(got_other.load());
}

}  // namespace
}  // namespace modelplane::core
