// The clock's waits: a ManualClock's end when the test moves time (and not before), a
// SystemClock's at the deadline, and a CancellationToken's sleep on either ends at a cancel.
#include "core/clock/clock.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "core/cancel/cancellation_token.h"

namespace modelplane::core {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Real time a wait may take to notice what ended it, on a loaded machine.
constexpr auto kNoticeWithin = std::chrono::seconds(5);

// Returns once the clock's sleepers have looked at its time since the call (two more waits
// ended: the first may have read the time just before the caller moved it).
void WaitForRecheck(const ManualClock& clock) {
  const std::uint64_t before = clock.waits_ended();
  const auto give_up = std::chrono::steady_clock::now() + kNoticeWithin;
  while (clock.waits_ended() < before + 2 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
  }
  ASSERT_GE(clock.waits_ended(), before + 2) << "no sleeper looked at the time again";
}

void WaitForSleepers(const ManualClock& clock, int count) {
  const auto give_up = std::chrono::steady_clock::now() + kNoticeWithin;
  while (clock.waiting() < count && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
  }
  ASSERT_GE(clock.waiting(), count) << "the sleeper never started to wait";
}

TEST(ManualClockTest, SleepEndsOnlyWhenTimeReachesItsDeadline) {
  ManualClock clock;
  CancellationToken token;
  std::atomic<bool> woke{false};
  std::atomic<bool> result{false};
  std::thread sleeper([&] {
    result = token.SleepFor(clock, seconds(10));
    woke = true;
  });
  WaitForSleepers(clock, 1);
  clock.Advance(seconds(9));
  WaitForRecheck(clock);
  EXPECT_FALSE(woke.load()) << "woke at nine of its ten seconds";
  clock.Advance(seconds(1));
  sleeper.join();
  EXPECT_TRUE(woke.load());
  EXPECT_TRUE(result.load()) << "a sleep that reached its deadline was not cancelled";
}

TEST(ManualClockTest, CancelEndsASleepThatTimeNeverEnds) {
  ManualClock clock;
  CancellationToken token;
  std::atomic<bool> result{true};
  std::thread sleeper([&] { result = token.SleepFor(clock, hours(24 * 365)); });
  WaitForSleepers(clock, 1);
  token.Cancel();
  sleeper.join();
  EXPECT_FALSE(result.load());
}

TEST(SystemClockTest, SleepEndsAtItsDeadlineAndAtOnceWhenCancelled) {
  const SystemClock clock;
  CancellationToken token;
  const auto started = clock.Now();
  EXPECT_TRUE(token.SleepFor(clock, milliseconds(30)));
  EXPECT_GE(clock.Now() - started, milliseconds(30)) << "woke before its deadline";

  std::thread canceller([&] { token.Cancel(); });
  // A sleep without end (a wrap-around would make it end at once, or never) ends at the cancel.
  EXPECT_FALSE(token.SleepFor(clock, std::chrono::nanoseconds::max()));
  canceller.join();
  EXPECT_FALSE(token.SleepUntil(clock, clock.Now() + hours(1))) << "already cancelled";
}

TEST(SystemClockTest, WaitUntilWithoutDeadlineReturnsWhenNotified) {
  const SystemClock clock;
  std::mutex mutex;
  std::condition_variable changed;
  bool ready = false;
  std::thread notifier([&] {
    std::lock_guard lock(mutex);
    ready = true;
    changed.notify_all();
  });
  std::unique_lock lock(mutex);
  while (!ready) clock.WaitUntil(lock, changed, Clock::SteadyTime::max());
  lock.unlock();
  notifier.join();
  EXPECT_TRUE(ready);
}

}  // namespace
}  // namespace modelplane::core
