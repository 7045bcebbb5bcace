// How the fetch engine chooses among sources that are busy, admitted, staging or misbehaving:
// the node's grants bound remote sources, a peer still staging a file is waited for instead of
// the origin, a stalled source costs one deadline for the whole fetch, and a flaky last source
// keeps the retries its successes pay for.
#include <thread>

#include <gtest/gtest.h>

#include "tests/node-agent/fetch/fetch_engine_fixture.h"
#include "tests/node-agent/fetch/scripted_source.h"

namespace modelplane::agent {
namespace {

using testing::ScriptedSource;

constexpr char kBucket[] = "objectStore/http://127.0.0.1:9000/models";

TEST_F(FetchEngineTest, AZeroGrantWaitsForAStagingPeerAndReadsNothingFromTheOrigin) {
  EnableAdmission({{.source = kBucket, .streams = 0}});
  ScriptedSource origin("objectStore/minio", "objectStore", base_ / "origin");
  origin.SetAdmissionKey(kBucket);
  ScriptedSource seeder("peer/10.0.0.1:7443", "peer", base_ / "mirror");
  seeder.staging = true;
  seeder.not_yet = true;
  std::jthread publish([&seeder] {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    seeder.not_yet = false;  // the seeder verified its files
  });
  auto report = Fetch({&origin, &seeder});
  ASSERT_TRUE(report) << report.error().ToString();
  ExpectAllPublished();
  EXPECT_EQ(origin.calls.load(), 0) << "a follower must not read the origin";
  EXPECT_EQ(seeder.bytes_served.load(), UniqueBytes());
  EXPECT_EQ(report->tier, "peer");
}

TEST_F(FetchEngineTest, ANodesGrantBoundsItsRequestsToTheSource) {
  options_.max_in_flight = 8;
  EnableAdmission({{.source = kBucket, .streams = 2}});
  ScriptedSource origin("objectStore/minio", "objectStore", base_ / "origin", 8);
  origin.SetAdmissionKey(kBucket);
  origin.delay_ms = 5;
  auto report = Fetch({&origin});
  ASSERT_TRUE(report) << report.error().ToString();
  ExpectAllPublished();
  EXPECT_LE(origin.max_in_flight_seen.load(), 2);
  const auto telemetry = telemetry_.Snapshot(8);
  ASSERT_EQ(telemetry.size(), 1u);
  EXPECT_EQ(telemetry[0].source, kBucket);
  EXPECT_EQ(telemetry[0].tier, "objectStore");
  EXPECT_GT(telemetry[0].requests_ok, 0);
  EXPECT_LE(telemetry[0].peak_streams, 2);
  EXPECT_GT(telemetry[0].bytes_per_second, 0);
}

TEST_F(FetchEngineTest, AStalledSourceCostsOneDeadlineForEveryFile) {
  options_.stall_cooldown = std::chrono::minutes(1);
  OpenStore();
  ScriptedSource stalled("http/slow", "http", base_ / "origin");
  stalled.stall = true;
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "mirror");
  auto report = Fetch({&stalled, &origin});
  ASSERT_TRUE(report) << report.error().ToString();
  ExpectAllPublished();
  // Only the ranges that were already waiting on it when the first deadline passed.
  EXPECT_LE(stalled.calls.load(), static_cast<int>(options_.max_in_flight));
  EXPECT_EQ(origin.bytes_served.load(), UniqueBytes());
}

TEST_F(FetchEngineTest, AFlakyLastSourceFinishesOnRetriesItsSuccessesPayFor) {
  // Four failures in a row at first (more than attempts_per_source), then every other request
  // fails: the old rule gave the only source up after three tries of one range.
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "origin");
  origin.retryable_failures_left = 4;
  origin.fail_every = 2;
  auto report = Fetch({&origin});
  ASSERT_TRUE(report) << report.error().ToString();
  ExpectAllPublished();
}

TEST_F(FetchEngineTest, AFailingLastSourceRunsItsRetryQuotaDry) {
  options_.retry_quota = 5;
  OpenStore();
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "origin");
  origin.retryable_failures_left = 1000;
  auto result = Fetch({&origin});
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message().find("no source left"), std::string::npos);
  EXPECT_LE(origin.calls.load(), 5 + static_cast<int>(options_.max_in_flight) * 2);
}

TEST_F(FetchEngineTest, ARangeWithNoSourceThatCanServeFailsAtTheWaitLimit) {
  options_.source_wait_limit = std::chrono::milliseconds(500);
  EnableAdmission({{.source = kBucket, .streams = 0}});
  ScriptedSource origin("objectStore/minio", "objectStore", base_ / "origin");
  origin.SetAdmissionKey(kBucket);
  ScriptedSource follower("peer/10.0.0.2:7443", "peer", base_ / "mirror");
  follower.staging = true;
  follower.not_yet = true;  // and never gets there
  const auto started = std::chrono::steady_clock::now();
  auto result = Fetch({&origin, &follower});
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message().find("no source could serve"), std::string::npos)
      << result.error().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  EXPECT_EQ(origin.calls.load(), 0);
}

TEST_F(FetchEngineTest, PeersAddedWhileTheFetchRunsAreUsed) {
  EnableAdmission({{.source = kBucket, .streams = 0}});
  ScriptedSource origin("objectStore/minio", "objectStore", base_ / "origin");
  origin.SetAdmissionKey(kBucket);
  SourceSet more;
  request_.more_sources = &more;
  std::jthread add([&more, this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    more.Add(std::make_unique<ScriptedSource>("peer/10.0.0.3:7443", "peer", base_ / "mirror"));
  });
  auto report = Fetch({&origin});
  ASSERT_TRUE(report) << report.error().ToString();
  ExpectAllPublished();
  EXPECT_EQ(origin.calls.load(), 0);
  EXPECT_EQ(report->tier, "peer");
}

TEST_F(FetchEngineTest, AWriteThrottleHoldsTheStagingToItsRate) {
  // What a node that serves inference does to its stagings (serving_protection.h).
  constexpr std::uint64_t kRate = 1 << 20;
  write_throttle_ = std::make_unique<core::ByteThrottle>(kRate, kRange, clock_);
  OpenStore();
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "origin");
  const auto started = std::chrono::steady_clock::now();
  auto report = Fetch({&origin});
  ASSERT_TRUE(report) << report.error().ToString();
  ExpectAllPublished();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_GE(seconds, 0.9 * static_cast<double>(UniqueBytes() - kRange) / kRate);
}

// A sole source that lands nothing (it stalls every range past its deadline) under a goodput
// floor: the fetch gives up once a whole window shows it, saying how fast it went and what the
// source last answered, instead of waiting out cool-downs for as long as the source stalls.
TEST_F(FetchEngineTest, ASoleStallingSourceUnderAGoodputFloorGivesUpSayingWhy) {
  options_.min_goodput = 1;
  options_.goodput_window = std::chrono::seconds(2);
  options_.stall_cooldown = std::chrono::milliseconds(200);
  OpenStore();
  ScriptedSource stalled("http/slow", "http", base_ / "origin");
  stalled.stall = true;
  const auto started = std::chrono::steady_clock::now();
  auto report = Fetch({&stalled});
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code(), core::ErrorCode::kDeadlineExceeded) << report.error().ToString();
  const std::string why = report.error().message();
  EXPECT_NE(why.find("slower than the floor of 1 B/s"), std::string::npos) << why;
  EXPECT_NE(why.find("0 B/s over the last 2 s"), std::string::npos) << why;
  EXPECT_NE(why.find("http/slow"), std::string::npos) << "names the source: " << why;
  EXPECT_NE(why.find("deadline"), std::string::npos) << "says what it answered: " << why;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
}

TEST_F(FetchEngineTest, AFetchPastItsDeadlineGivesUpSayingHowFarItGot) {
  options_.deadline = std::chrono::milliseconds(500);
  OpenStore();
  ScriptedSource slow("objectStore/origin", "objectStore", base_ / "origin");
  slow.delay_ms = 200;  // every range: the fetch needs far longer than its deadline
  auto report = Fetch({&slow});
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code(), core::ErrorCode::kDeadlineExceeded) << report.error().ToString();
  EXPECT_NE(report.error().message().find("not done within its deadline of 0.5 s"),
            std::string::npos)
      << report.error().message();
  EXPECT_NE(report.error().message().find("bytes landed after"), std::string::npos);
}

}  // namespace
}  // namespace modelplane::agent
