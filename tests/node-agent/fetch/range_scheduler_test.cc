#include "node-agent/fetch/range_scheduler.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

using Task = RangeScheduler::Task;

std::vector<std::size_t> Ranges(std::size_t count) {
  std::vector<std::size_t> ranges(count);
  for (std::size_t index = 0; index < count; ++index) ranges[index] = index;
  return ranges;
}

// Takes every range Next hands out now, as "file:range" pairs.
std::vector<std::pair<std::size_t, std::size_t>> Drain(RangeScheduler& scheduler) {
  std::vector<std::pair<std::size_t, std::size_t>> taken;
  while (auto task = scheduler.Next()) taken.emplace_back(task->file, task->range);
  EXPECT_FALSE(scheduler.HasWork());
  return taken;
}

TEST(RangeSchedulerTest, TakesTheEarliestFileWhoseWindowHasRoom) {
  RangeScheduler scheduler({.files_in_flight = 2, .window = 2}, 3);
  for (std::size_t file = 0; file < 3; ++file) scheduler.SetPending(file, Ranges(4), 0);
  ASSERT_TRUE(scheduler.HasWork());
  // File 0 fills its window first, then file 1; file 2 waits for a place.
  EXPECT_EQ(Drain(scheduler),
            (std::vector<std::pair<std::size_t, std::size_t>>{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
  scheduler.Hashed(1, 1);  // file 1's hash passed range 0: one more of it fits
  EXPECT_EQ(Drain(scheduler), (std::vector<std::pair<std::size_t, std::size_t>>{{1, 2}}));
  scheduler.Hashed(0, 1);
  scheduler.Hashed(1, 2);
  // Both have room again: the earlier file comes first.
  EXPECT_EQ(scheduler.Next()->file, 0u);
  scheduler.Finished(0);  // file 2 enters, behind what file 1 has room for
  EXPECT_EQ(Drain(scheduler),
            (std::vector<std::pair<std::size_t, std::size_t>>{{1, 3}, {2, 0}, {2, 1}}));
}

TEST(RangeSchedulerTest, FilesWithNothingToFetchAreNeverAdmitted) {
  RangeScheduler scheduler({.files_in_flight = 1, .window = 8}, 3);
  // File 0 is in the cache already (never scheduled); file 1 is scheduled with nothing left
  // to fetch (a resumed staging, being hashed), so it holds the one place until it finishes.
  scheduler.SetPending(1, {}, 0);
  scheduler.SetPending(2, Ranges(2), 0);
  EXPECT_FALSE(scheduler.HasWork());
  EXPECT_FALSE(scheduler.Next());
  scheduler.Finished(1);
  EXPECT_EQ(Drain(scheduler), (std::vector<std::pair<std::size_t, std::size_t>>{{2, 0}, {2, 1}}));
}

TEST(RangeSchedulerTest, WindowCountsFromWhereTheHashStands) {
  RangeScheduler scheduler({.files_in_flight = 1, .window = 3}, 1);
  // Ranges 0-4 were resumed from disk; the hash has not reached them yet.
  scheduler.SetPending(0, {5, 6, 7, 8}, 0);
  EXPECT_FALSE(scheduler.HasWork()) << "range 5 is 5 past the hash, beyond a window of 3";
  scheduler.Hashed(0, 4);
  EXPECT_EQ(Drain(scheduler), (std::vector<std::pair<std::size_t, std::size_t>>{{0, 5}, {0, 6}}));
  scheduler.Hashed(0, 2);  // stale news never moves the window back
  EXPECT_FALSE(scheduler.HasWork());
}

TEST(RangeSchedulerTest, AFileThatStartsOverIsScheduledFromItsFirstRange) {
  RangeScheduler scheduler({.files_in_flight = 2, .window = 4}, 1);
  scheduler.SetPending(0, Ranges(3), 0);
  EXPECT_EQ(Drain(scheduler).size(), 3u);
  scheduler.Hashed(0, 3);
  // The digest did not match: every range again, and the hash from zero.
  scheduler.SetPending(0, Ranges(3), 0);
  EXPECT_EQ(Drain(scheduler),
            (std::vector<std::pair<std::size_t, std::size_t>>{{0, 0}, {0, 1}, {0, 2}}));
}

TEST(RangeSchedulerTest, LimitsBelowOneAreRaisedToOne) {
  RangeScheduler scheduler({.files_in_flight = 0, .window = 0}, 2);
  scheduler.SetPending(0, Ranges(2), 0);
  scheduler.SetPending(1, Ranges(2), 0);
  EXPECT_EQ(Drain(scheduler), (std::vector<std::pair<std::size_t, std::size_t>>{{0, 0}}));
}

}  // namespace
}  // namespace modelplane::agent
