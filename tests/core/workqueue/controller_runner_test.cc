#include "core/workqueue/controller_runner.h"

#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

using std::chrono::milliseconds;

// Waits (bounded) until the predicate holds; the runner works on its own threads.
template <typename Predicate>
bool Eventually(Predicate predicate) {
  for (int i = 0; i < 500; ++i) {
    if (predicate()) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return predicate();
}

class ControllerRunnerTest : public ::testing::Test {
 protected:
  int Calls(const std::string& key) {
    std::lock_guard lock(mutex_);
    return calls_[key];
  }
  int Record(const std::string& key) {
    std::lock_guard lock(mutex_);
    return ++calls_[key];
  }

  SystemClock clock_;
  WorkQueue queue_{std::make_unique<ItemExponentialRateLimiter>(milliseconds(1), milliseconds(20)),
                   clock_};
  std::mutex mutex_;
  std::map<std::string, int> calls_;
};

TEST_F(ControllerRunnerTest, RetryableErrorsAreRetriedUntilSuccess) {
  ControllerRunner runner(
      queue_,
      [&](const std::string& key) -> Result<ReconcileResult> {
        if (Record(key) < 4) return MakeError(ErrorCode::kUnavailable, "api server away");
        return ReconcileResult::Done();
      },
      2);
  runner.Start();
  queue_.Add("ns/flaky");
  ASSERT_TRUE(Eventually([&] { return Calls("ns/flaky") == 4; }));
  ASSERT_TRUE(Eventually([&] { return queue_.NumRequeues("ns/flaky") == 0; }))
      << "success forgets the backoff";
  runner.Stop();
  EXPECT_EQ(runner.stats().retried_errors.load(), 3u);
  EXPECT_EQ(Calls("ns/flaky"), 4);
}

TEST_F(ControllerRunnerTest, OnlyTerminalErrorsAreNotRetried) {
  std::vector<std::string> observed;
  ControllerRunner runner(
      queue_,
      [&](const std::string& key) -> Result<ReconcileResult> {
        const int call = Record(key);
        if (key == "ns/bad")
          return std::unexpected(
              Error(ErrorCode::kInvalidArgument, "spec is invalid").MarkTerminal());
        // Not retryable by its code (a 403 from a policy), but it clears: retried with backoff.
        if (key == "ns/forbidden" && call < 3)
          return MakeError(ErrorCode::kPermissionDenied, "denied");
        // A reconciler that throws is contained and retried too.
        if (key == "ns/throws" && call < 2) throw std::runtime_error("bug");
        return ReconcileResult::Done();
      },
      1, [&](const std::string& key, const Error&) { observed.push_back(key); });
  runner.Start();
  queue_.Add("ns/bad");
  queue_.Add("ns/forbidden");
  queue_.Add("ns/throws");
  ASSERT_TRUE(Eventually([&] { return Calls("ns/forbidden") == 3 && Calls("ns/throws") == 2; }));
  ASSERT_TRUE(Eventually([&] { return runner.stats().terminal_errors.load() == 1; }));
  std::this_thread::sleep_for(milliseconds(50));
  runner.Stop();
  EXPECT_EQ(Calls("ns/bad"), 1) << "a terminal error waits for the object to change";
  EXPECT_EQ(runner.stats().retried_errors.load(), 3u);
  EXPECT_EQ(observed.size(), 4u);
}

TEST_F(ControllerRunnerTest, RequeueAfterComesBack) {
  ControllerRunner runner(
      queue_,
      [&](const std::string& key) -> Result<ReconcileResult> {
        if (Record(key) < 3) return ReconcileResult::RequeueAfter(milliseconds(5));
        return ReconcileResult::Done();
      },
      1);
  runner.Start();
  queue_.Add("ns/poll");
  ASSERT_TRUE(Eventually([&] { return Calls("ns/poll") == 3; }));
  runner.Stop();
  EXPECT_EQ(runner.stats().requeues_after.load(), 2u);
}

TEST_F(ControllerRunnerTest, StopWaitsForInFlightReconcile) {
  std::atomic<bool> finished{false};
  ControllerRunner runner(
      queue_,
      [&](const std::string&) -> Result<ReconcileResult> {
        std::this_thread::sleep_for(milliseconds(50));
        finished = true;
        return ReconcileResult::Done();
      },
      1);
  runner.Start();
  queue_.Add("ns/slow");
  ASSERT_TRUE(Eventually([&] { return runner.stats().reconciles.load() == 1; }));
  runner.Stop();
  EXPECT_TRUE(finished.load());
}

}  // namespace
}  // namespace modelplane::core
