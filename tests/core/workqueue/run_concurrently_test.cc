#include "core/workqueue/run_concurrently.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

TEST(RunConcurrentlyTest, CallsEveryIndexOnceWithAtMostTheLimitInFlight) {
  constexpr std::size_t kCount = 40;
  std::vector<std::atomic<int>> calls(kCount);
  std::atomic<int> in_flight{0};
  std::atomic<int> most_in_flight{0};
  RunConcurrently(kCount, 4, [&](std::size_t index) {
    const int now = ++in_flight;
    int seen = most_in_flight.load();
    while (now > seen && !most_in_flight.compare_exchange_weak(seen, now)) {
    }
    // Each call blocks until another is in flight too (bounded, so a broken helper fails the
    // expectation below instead of hanging), as blocking writes would overlap.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (most_in_flight.load() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ++calls[index];
    --in_flight;
  });
  for (std::size_t index = 0; index < kCount; ++index) EXPECT_EQ(calls[index], 1) << index;
  EXPECT_LE(most_in_flight.load(), 4);
  EXPECT_GE(most_in_flight.load(), 2);
}

TEST(RunConcurrentlyTest, ReturnsOnlyAfterEveryCallHasReturned) {
  std::atomic<int> finished{0};
  RunConcurrently(8, 8, [&](std::size_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ++finished;
  });
  EXPECT_EQ(finished.load(), 8);
}

TEST(RunConcurrentlyTest, NothingToDoCallsNothingAndALimitOfZeroStillRunsOnTheCaller) {
  int calls = 0;
  RunConcurrently(0, 8, [&](std::size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  const auto caller = std::this_thread::get_id();
  RunConcurrently(3, 0, [&](std::size_t) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    ++calls;
  });
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace modelplane::core
