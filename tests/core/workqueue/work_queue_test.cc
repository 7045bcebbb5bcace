#include "core/workqueue/work_queue.h"

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

using std::chrono::milliseconds;

class WorkQueueTest : public ::testing::Test {
 protected:
  SystemClock clock_;
  WorkQueue queue_{MakeDefaultControllerRateLimiter(clock_), clock_};
};

TEST_F(WorkQueueTest, RepeatedAddsCollapse) {
  queue_.Add("ns/a");
  queue_.Add("ns/b");
  queue_.Add("ns/a");
  queue_.Add("ns/a");
  EXPECT_EQ(queue_.Length(), 2u);
  EXPECT_EQ(queue_.Get(), "ns/a");
  EXPECT_EQ(queue_.Get(), "ns/b");
  EXPECT_EQ(queue_.Length(), 0u);
}

TEST_F(WorkQueueTest, KeyAddedWhileProcessingComesBackAfterDone) {
  queue_.Add("ns/a");
  ASSERT_EQ(queue_.Get(), "ns/a");
  queue_.Add("ns/a");
  EXPECT_EQ(queue_.Length(), 0u) << "must not be handed to a second worker while processing";
  queue_.Done("ns/a");
  EXPECT_EQ(queue_.Length(), 1u);
  EXPECT_EQ(queue_.Get(), "ns/a");
  queue_.Done("ns/a");
  EXPECT_EQ(queue_.Length(), 0u);
}

TEST_F(WorkQueueTest, NeverGivesOneKeyToTwoWorkers) {
  constexpr int kKeys = 8;
  std::map<std::string, std::atomic<int>> in_flight;
  for (int i = 0; i < kKeys; ++i) in_flight[std::to_string(i)] = 0;
  std::atomic<int> violations{0};
  std::atomic<int> processed{0};
  std::vector<std::thread> workers;
  workers.reserve(4);
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (auto key = queue_.Get()) {
        if (in_flight.at(*key).fetch_add(1) != 0) violations++;
        std::this_thread::yield();
        in_flight.at(*key).fetch_sub(1);
        processed++;
        queue_.Done(*key);
      }
    });
  }
  std::vector<std::thread> producers;
  producers.reserve(3);
  for (int p = 0; p < 3; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < 3000; ++i) queue_.Add(std::to_string((i + p) % kKeys));
    });
  }
  for (auto& producer : producers) producer.join();
  queue_.ShutDownWithDrain();
  for (auto& worker : workers) worker.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_GE(processed.load(), kKeys);
  EXPECT_LE(processed.load(), 9000);
}

TEST_F(WorkQueueTest, AddAfterDelaysAndEarliestDelayWins) {
  queue_.AddAfter("late", std::chrono::hours(1));
  queue_.AddAfter("soon", milliseconds(30));
  queue_.AddAfter("late", milliseconds(40));       // replaces the hour-long delay
  queue_.AddAfter("soon", std::chrono::hours(1));  // a later delay does not postpone it
  EXPECT_EQ(queue_.Length(), 0u);
  EXPECT_EQ(queue_.DelayedLength(), 2u);
  EXPECT_EQ(queue_.Get(), "soon");
  EXPECT_EQ(queue_.Get(), "late");
  EXPECT_EQ(queue_.DelayedLength(), 0u);
}

// Delays run on the queue's clock, not on real time: a simulation (or a test) moves them.
TEST(WorkQueueClockTest, DelayedKeysBecomeReadyWhenTheClockReachesThem) {
  ManualClock clock;
  WorkQueue queue(MakeDefaultControllerRateLimiter(clock), clock);
  queue.AddAfter("at-10s", std::chrono::seconds(10));
  queue.AddAfter("at-9s", std::chrono::seconds(9));
  clock.Advance(std::chrono::seconds(9));
  // The delay thread moves every key due by then in one pass, in time order, so once "at-9s"
  // is handed out the pass that left "at-10s" delayed is over.
  EXPECT_EQ(queue.Get(), "at-9s");
  EXPECT_EQ(queue.Length(), 0u);
  EXPECT_EQ(queue.DelayedLength(), 1u) << "a key due at 10 s must wait at 9 s";
  clock.Advance(std::chrono::seconds(1));
  EXPECT_EQ(queue.Get(), "at-10s");
  EXPECT_EQ(queue.DelayedLength(), 0u);
}

// The default controller limiter's per-key backoff (5 ms, doubling) on a clock that only the
// test moves: each failure of a key waits twice as long as the last, and Forget starts over.
// A queue that handed rate-limited keys out at once, or a limiter that did not grow, fails.
TEST(WorkQueueClockTest, RateLimitedAddsBackOffPerKeyAndForgetStartsOver) {
  ManualClock clock;
  WorkQueue queue(MakeDefaultControllerRateLimiter(clock), clock);
  // Returns once the delay thread has looked at the clock since the last Advance.
  const auto settle = [&clock] {
    const std::uint64_t seen = clock.waits_ended();
    while (clock.waits_ended() < seen + 2) std::this_thread::yield();
  };
  for (const auto expected : {milliseconds(5), milliseconds(10), milliseconds(20)}) {
    queue.AddRateLimited("k");
    settle();
    clock.Advance(expected - milliseconds(1));
    settle();
    EXPECT_EQ(queue.Length(), 0u) << "handed out before its backoff of " << expected.count()
                                  << " ms";
    EXPECT_EQ(queue.DelayedLength(), 1u);
    clock.Advance(milliseconds(1));
    EXPECT_EQ(queue.Get(), "k");
    queue.Done("k");
  }
  EXPECT_EQ(queue.NumRequeues("k"), 3);
  queue.Forget("k");
  EXPECT_EQ(queue.NumRequeues("k"), 0);
  queue.AddRateLimited("k");
  clock.Advance(milliseconds(5));
  EXPECT_EQ(queue.Get(), "k") << "after Forget the backoff is 5 ms again";
}

TEST_F(WorkQueueTest, ShutDownHandsOutWhatIsQueuedThenStops) {
  queue_.Add("a");
  queue_.Add("b");
  queue_.AddAfter("delayed", std::chrono::hours(1));
  queue_.ShutDown();
  queue_.Add("ignored");
  EXPECT_TRUE(queue_.ShuttingDown());
  EXPECT_EQ(queue_.Get(), "a");
  EXPECT_EQ(queue_.Get(), "b");
  EXPECT_EQ(queue_.Get(), std::nullopt);
  EXPECT_EQ(queue_.DelayedLength(), 0u);
}

TEST_F(WorkQueueTest, ShutDownWithDrainWaitsForInFlightKeys) {
  queue_.Add("slow");
  ASSERT_EQ(queue_.Get(), "slow");
  std::atomic<bool> finished{false};
  std::thread worker([&] {
    std::this_thread::sleep_for(milliseconds(50));
    finished = true;
    queue_.Done("slow");
  });
  queue_.ShutDownWithDrain();
  EXPECT_TRUE(finished.load());
  worker.join();
}

// Get blocks on an empty queue until a key comes, and returns nothing once shut down. The
// sleeps only give a Get that did not block the chance to show it (it would return before the
// key or the shutdown); they cannot make a correct queue fail.
TEST_F(WorkQueueTest, GetBlocksUntilAKeyComesAndReturnsNothingOnShutDown) {
  std::optional<std::string> got;
  std::thread taker([&] { got = queue_.Get(); });
  std::this_thread::sleep_for(milliseconds(50));
  queue_.Add("late");
  taker.join();
  EXPECT_EQ(got, "late") << "Get returned before a key came";
  queue_.Done("late");

  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    EXPECT_EQ(queue_.Get(), std::nullopt);
    returned = true;
  });
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(returned.load()) << "Get returned on an empty queue that was not shut down";
  queue_.ShutDown();
  waiter.join();
  EXPECT_TRUE(returned.load());
}

}  // namespace
}  // namespace modelplane::core
