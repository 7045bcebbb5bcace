#include "node-agent/controller/requeue_plan.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr core::Clock::SteadyTime kPassTime{seconds(1'000)};

RequeueFacts Idle() {
  return {.now = kPassTime, .status_interval = seconds(2)};
}

TEST(RequeuePlanTest, NothingPendingWaitsForAnEvent) {
  EXPECT_FALSE(PlanRequeue(Idle()).requeue_after);
}

TEST(RequeuePlanTest, AnythingMovingComesBackAtTheStatusPaceWhateverElseIsDue) {
  RequeueFacts facts = Idle();
  facts.moving = true;
  facts.staging_retry_at = kPassTime + seconds(60);
  facts.retention_interval = seconds(30);
  EXPECT_EQ(PlanRequeue(facts).requeue_after, seconds(2));
}

TEST(RequeuePlanTest, TheSoonestReasonWins) {
  RequeueFacts facts = Idle();
  facts.retention_interval = seconds(30);
  EXPECT_EQ(PlanRequeue(facts).requeue_after, seconds(30));
  facts.revision_read_retry_at = kPassTime + seconds(12);
  EXPECT_EQ(PlanRequeue(facts).requeue_after, seconds(12));
  facts.staging_retry_at = kPassTime + seconds(5);
  EXPECT_EQ(PlanRequeue(facts).requeue_after, seconds(5));
  // The stored status started differing 1.5 s ago: write it again when the pace allows.
  facts.status_differs_since = kPassTime - milliseconds(1'500);
  EXPECT_EQ(PlanRequeue(facts).requeue_after, milliseconds(500));
}

TEST(RequeuePlanTest, RetriesAreNeverSoonerThanASecond) {
  RequeueFacts facts = Idle();
  facts.staging_retry_at = kPassTime - seconds(5);  // overdue
  EXPECT_EQ(PlanRequeue(facts).requeue_after, seconds(1));
  facts = Idle();
  facts.revision_read_retry_at = kPassTime + milliseconds(10);
  EXPECT_EQ(PlanRequeue(facts).requeue_after, seconds(1));
}

}  // namespace
}  // namespace modelplane::agent
