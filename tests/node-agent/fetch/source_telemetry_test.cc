#include "node-agent/fetch/source_telemetry.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(SourceTelemetryTest, SummarisesTheWindow) {
  core::ManualClock clock;
  SourceTelemetryRecorder recorder(clock, seconds(10));
  for (int index = 0; index < 3; ++index) recorder.Started("objectStore/a", "objectStore");
  clock.Advance(seconds(2));
  recorder.Finished("objectStore/a", RequestOutcome::kOk, 4 << 20, milliseconds(30));
  recorder.Finished("objectStore/a", RequestOutcome::kThrottled, 0, milliseconds(10));
  recorder.Finished("objectStore/a", RequestOutcome::kOk, 4 << 20, milliseconds(50));
  const auto snapshot = recorder.Snapshot(8);
  ASSERT_EQ(snapshot.size(), 1u);
  const core::api::SourceTelemetry& source = snapshot[0];
  EXPECT_EQ(source.source, "objectStore/a");
  EXPECT_EQ(source.tier, "objectStore");
  EXPECT_EQ(source.window_seconds, 10);
  EXPECT_EQ(source.peak_streams, 3);
  EXPECT_EQ(source.requests_ok, 2);
  EXPECT_EQ(source.requests_throttled, 1);
  // 8 MiB over the 2 s the source was in use, not over the whole window.
  EXPECT_EQ(source.bytes_per_second, (8 << 20) / 2);
  EXPECT_EQ(source.ttfb_milliseconds, 30);
  EXPECT_EQ(source.granted_streams, -1);
}

TEST(SourceTelemetryTest, OldRequestsLeaveTheWindowAndIdleSourcesTheSnapshot) {
  core::ManualClock clock;
  SourceTelemetryRecorder recorder(clock, seconds(5));
  recorder.Started("peer/a", "peer");
  recorder.Finished("peer/a", RequestOutcome::kTimedOut, 0, std::nullopt);
  recorder.Started("peer/b", "peer");
  clock.Advance(seconds(6));
  const auto snapshot = recorder.Snapshot(8);
  ASSERT_EQ(snapshot.size(), 1u) << "peer/a has been idle for a whole window";
  EXPECT_EQ(snapshot[0].source, "peer/b");
  EXPECT_EQ(snapshot[0].peak_streams, 1) << "still in flight";
  recorder.Abandoned("peer/b");
  EXPECT_TRUE(recorder.Snapshot(8).empty());
}

TEST(SourceTelemetryTest, TheSnapshotKeepsTheBusiestSources) {
  core::ManualClock clock;
  SourceTelemetryRecorder recorder(clock, seconds(10));
  for (int index = 0; index < 5; ++index) {
    const std::string name = "peer/" + std::to_string(index);
    recorder.Started(name, "peer");
    clock.Advance(seconds(1));
    recorder.Finished(name, RequestOutcome::kOk, static_cast<std::uint64_t>(index) << 20,
                      std::nullopt);
  }
  const auto snapshot = recorder.Snapshot(2);
  ASSERT_EQ(snapshot.size(), 2u);
  EXPECT_EQ(snapshot[0].source, "peer/4");
  EXPECT_EQ(snapshot[1].source, "peer/3");
}

TEST(SourceTelemetryTest, OutcomesFollowTheErrorCode) {
  EXPECT_EQ(OutcomeOf(core::Error(core::ErrorCode::kThrottled, "503 SlowDown")),
            RequestOutcome::kThrottled);
  EXPECT_EQ(OutcomeOf(core::Error(core::ErrorCode::kDeadlineExceeded, "late")),
            RequestOutcome::kTimedOut);
  EXPECT_EQ(OutcomeOf(core::Error(core::ErrorCode::kUnavailable, "500")), RequestOutcome::kFailed);
}

}  // namespace
}  // namespace modelplane::agent
