#include "node-agent/eviction/use_history.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "core/clock/clock.h"

namespace modelplane::agent {
namespace {

using std::chrono::hours;

// Test constants: a throw before main ends the test binary either way.
// NOLINTBEGIN(cert-err58-cpp)
const core::Sha256Bytes kA = core::Sha256Of("a");
const core::Sha256Bytes kB = core::Sha256Of("b");
// NOLINTEND(cert-err58-cpp)

// Wall time that moves only when told (an injected clock, as the agent passes it).
class UseHistoryTest : public ::testing::Test {
 protected:
  UseHistory::WallTime Now() const { return clock_.WallNow(); }
  core::ManualClock clock_;
  UseHistory history_{{.half_life = hours(24)}};
};

TEST_F(UseHistoryTest, EachNewUserIsOneUseAndScoresHalveEveryHalfLifeWhenIdle) {
  EXPECT_TRUE(history_.Observe(kA, {"pod-1", "pod-2"}, Now()));
  EXPECT_DOUBLE_EQ(history_.Score(kA, Now()), 2);
  EXPECT_FALSE(history_.Observe(kA, {"pod-1", "pod-2"}, Now()));  // the same users: no new use
  clock_.Advance(hours(48));
  // Still in use for those 48 hours: no ageing while it serves.
  EXPECT_DOUBLE_EQ(history_.Score(kA, Now()), 2);
  EXPECT_TRUE(history_.Observe(kA, {}, Now()));  // the use ended
  EXPECT_EQ(history_.LastUsed(kA), Now());
  clock_.Advance(hours(24));
  EXPECT_DOUBLE_EQ(history_.Score(kA, Now()), 1);
  clock_.Advance(hours(24));
  EXPECT_DOUBLE_EQ(history_.Score(kA, Now()), 0.5);
  EXPECT_TRUE(history_.Observe(kA, {"pod-3"}, Now()));
  EXPECT_DOUBLE_EQ(history_.Score(kA, Now()), 1.5);
}

// Ageing: a revision used often long ago ends below one used once just now.
TEST_F(UseHistoryTest, OldFrequentUseFallsBelowRecentUse) {
  history_.Observe(kA, {"1", "2", "3", "4"}, Now());
  history_.Observe(kA, {}, Now());
  clock_.Advance(hours(72));
  history_.Observe(kB, {"5"}, Now());
  EXPECT_DOUBLE_EQ(history_.Score(kA, Now()), 0.5);
  EXPECT_GT(history_.Score(kB, Now()), history_.Score(kA, Now()));
}

TEST_F(UseHistoryTest, KnownRevisionsStartAtOneFromPublication) {
  const auto published = Now();
  clock_.Advance(hours(24));
  EXPECT_TRUE(history_.Known(kA, published));
  EXPECT_FALSE(history_.Known(kA, published));
  EXPECT_DOUBLE_EQ(history_.Score(kA, Now()), 0.5);
  EXPECT_FALSE(history_.LastUsed(kA));
  EXPECT_DOUBLE_EQ(history_.Score(kB, Now()), 0);
}

TEST_F(UseHistoryTest, SavedAndLoadedAcrossRestartsAndBounded) {
  history_.Observe(kA, {"pod-1"}, Now());
  history_.Known(kB, Now());
  const auto path = std::filesystem::temp_directory_path() /
                    ("use-history-" + std::to_string(::getpid())) / "uses.json";
  ASSERT_TRUE(history_.Save(path));
  UseHistory loaded({.half_life = hours(24)});
  ASSERT_TRUE(loaded.Load(path));
  EXPECT_DOUBLE_EQ(loaded.Score(kA, Now()), 1);
  EXPECT_EQ(loaded.LastUsed(kA), history_.LastUsed(kA));
  EXPECT_FALSE(loaded.Observe(kA, {"pod-1"}, Now()));  // the user is remembered
  EXPECT_DOUBLE_EQ(loaded.Score(kB, Now()), 1);
  std::filesystem::remove_all(path.parent_path());
  UseHistory missing;
  EXPECT_TRUE(missing.Load(path));  // no file: empty
  EXPECT_FALSE(missing.Parse("{not json"));
  EXPECT_FALSE(missing.Parse(R"({"version": 1, "revisions": [{"digest": "x"}]})"));

  UseHistory small({.max_revisions = 2});
  small.Known(kA, Now());
  clock_.Advance(hours(1));
  small.Known(kB, Now());
  clock_.Advance(hours(1));
  small.Known(core::Sha256Of("c"), Now());
  EXPECT_EQ(small.size(), 2u);
  EXPECT_DOUBLE_EQ(small.Score(kA, Now()), 0);  // the oldest went
}

}  // namespace
}  // namespace modelplane::agent
