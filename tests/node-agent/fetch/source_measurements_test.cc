// What the agent learns about sources from its fetches: whether an origin looks down, and the
// throughput each source and tier delivered (what eviction prices refetches with).
#include <gtest/gtest.h>

#include "core/clock/clock.h"
#include "node-agent/fetch/source_health.h"
#include "node-agent/fetch/source_throughput.h"

namespace modelplane::agent {
namespace {

TEST(SourceHealthTest, AnOriginLooksDownAfterAFailureUntilItServesAgain) {
  core::ManualClock clock;
  SourceHealth health(clock, std::chrono::minutes(5));
  const std::chrono::seconds window(600);
  EXPECT_FALSE(health.LooksDown("http/origin", window));  // never asked: nothing says so
  health.ReportRangeOutcome("http/origin", true);
  EXPECT_FALSE(health.LooksDown("http/origin", window));
  clock.Advance(std::chrono::seconds(1));
  health.ReportRangeOutcome("http/origin", false);
  EXPECT_TRUE(health.LooksDown("http/origin", window));
  clock.Advance(std::chrono::seconds(601));
  EXPECT_FALSE(health.LooksDown("http/origin", window));  // an old failure says nothing now
  health.ReportRangeOutcome("http/origin", false);
  EXPECT_TRUE(health.LooksDown("http/origin", window));
  health.ReportRangeOutcome("http/origin", true);
  EXPECT_FALSE(health.LooksDown("http/origin", window));
  EXPECT_FALSE(health.LooksDown("http/other", window));
}

TEST(SourceThroughputTest, AggregateRateSharedBySourcesAndAveraged) {
  SourceThroughput throughput;
  FetchReport report;
  const auto start = std::chrono::system_clock::time_point(std::chrono::seconds(1000));
  report.times.first_byte = start;
  report.times.last_byte = start + std::chrono::seconds(2);
  report.files.push_back({.bytes_by_source = {{"peer/10.0.0.1:7443", 300ull << 20},
                                              {"objectStore/s3", 100ull << 20}}});
  throughput.Record(report);
  // 400 MiB in 2 s = 200 MiB/s, three quarters of it from the peer.
  EXPECT_DOUBLE_EQ(*throughput.SourceBytesPerSecond("peer/10.0.0.1:7443"), 150.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(*throughput.TierBytesPerSecond("objectStore"), 50.0 * (1 << 20));
  EXPECT_FALSE(throughput.SourceBytesPerSecond("http/origin"));
  // The next sample moves the average by a share of the difference.
  report.files[0].bytes_by_source = {{"objectStore/s3", 400ull << 20}};
  throughput.Record(report);
  EXPECT_DOUBLE_EQ(*throughput.SourceBytesPerSecond("objectStore/s3"),
                   50.0 * (1 << 20) + SourceThroughput::kWeight * 150.0 * (1 << 20));
  // A tiny fetch measures latency, not throughput: ignored.
  report.files[0].bytes_by_source = {{"objectStore/s3", 1000}};
  const double before = *throughput.SourceBytesPerSecond("objectStore/s3");
  throughput.Record(report);
  EXPECT_DOUBLE_EQ(*throughput.SourceBytesPerSecond("objectStore/s3"), before);
}

}  // namespace
}  // namespace modelplane::agent
