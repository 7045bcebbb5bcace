// The rollout simulator's scenario as `plan` builds it from API objects: which nodes stage and
// which serve, their zones, NICs and disks, each origin's rates and where they came from.
#include "kubectl-plugin/rollout_forecast.h"

#include <gtest/gtest.h>

#include "simulation/rollout_simulation.h"
#include "tests/kubectl-plugin/test_objects.h"

namespace modelplane::cli {
namespace {

using nlohmann::json;
using simulation::kGigabit;
using testing::Cache;
using testing::CachedEntry;
using testing::kDigest;
using testing::kGiB;

constexpr char kS3Identity[] = "objectStore/aws:/models";  // the test revision's only source

json RevisionWithStatus() {
  json revision = testing::Revision();
  revision["status"] = testing::ReadyStatus();
  return revision;
}

json ZonedCache(const std::string& node, const std::string& zone, json status_entries,
                std::int64_t media_bytes_per_second = 0) {
  json cache = Cache(node, json::array(), std::move(status_entries));
  cache["status"]["zone"] = zone;
  cache["status"]["mediaBandwidthBytesPerSecond"] = media_bytes_per_second;
  return cache;
}

// gpu-a holds it Ready in zone-a (2 GiB/s disk); gpu-b stages it in zone-a; gpu-c and gpu-d are
// empty in zone-b; gpu-e has no agent status.
ObjectListing FiveCaches() {
  json cache_without_status = Cache("gpu-e", json::array(), json::array());
  cache_without_status.erase("status");
  return {.items = {ZonedCache("gpu-d", "zone-b", json::array()),
                    ZonedCache("gpu-a", "zone-a",
                               json::array({CachedEntry(kDigest, "Ready", 140 * kGiB, 140 * kGiB)}),
                               2 * kGiB),
                    ZonedCache("gpu-b", "zone-a",
                               json::array({CachedEntry(kDigest, "Staging", kGiB, 140 * kGiB)})),
                    ZonedCache("gpu-c", "zone-b", json::array(), 3 * kGiB), cache_without_status}};
}

json Budget(const std::string& identity, json status) {
  return {{"apiVersion", "modelplane.io/v1alpha1"},
          {"kind", "SourceBudget"},
          {"metadata", {{"name", "objectstore-0123456789abcdef"}}},
          {"spec", {{"source", identity}}},
          {"status", std::move(status)}};
}

json LearnedStatus() {
  return {{"streams", 12},
          {"phase", "Holding"},
          {"kneeStreams", 12},
          {"bestBytesPerSecond", 2'000'000'000},
          {"bestStreams", 12},
          {"perStreamBytesPerSecond", 150'000'000},
          {"bestTtfbMilliseconds", 40}};
}

RolloutPlan Plan(const json& revision, const ObjectListing& caches, const ObjectListing& budgets,
                 const ForecastFlags& flags) {
  auto plan = PlanRollout(revision, caches, budgets, flags);
  EXPECT_TRUE(plan) << plan.error().message();
  return plan ? *plan : RolloutPlan{};
}

TEST(RolloutForecastTest, HoldersServeAndTheFirstNodesByNameStage) {
  const RolloutPlan plan = Plan(RevisionWithStatus(), FiveCaches(), {}, {.replicas = 3});
  EXPECT_EQ(plan.revision, "team-a/llama-r2");
  EXPECT_EQ(plan.holders, std::vector<std::string>({"gpu-a"}));
  EXPECT_EQ(plan.staging, std::vector<std::string>({"gpu-b", "gpu-c"}));
  EXPECT_EQ(plan.unplaceable, 0);
  EXPECT_EQ(plan.measured_disks, 1);  // gpu-c's; gpu-a's does not stage
  EXPECT_EQ(plan.scenario.file_sizes, std::vector<std::uint64_t>({100 * kGiB, 40 * kGiB}));
  EXPECT_EQ(plan.scenario.time_limit_seconds, kForecastHorizonSeconds);
  ASSERT_EQ(plan.scenario.nodes.size(), 3u);  // gpu-d neither serves nor stages
  const simulation::NodeModel& holder = plan.scenario.nodes[0];
  EXPECT_EQ(holder.name, "gpu-a");
  EXPECT_EQ(holder.zone, "zone-a");
  EXPECT_TRUE(holder.holds_ready);
  EXPECT_FALSE(holder.stages);
  EXPECT_EQ(holder.write_bytes_per_second, 2.0 * kGiB);
  EXPECT_EQ(holder.nic_bytes_per_second, 25 * kGigabit);
  const simulation::NodeModel& unmeasured = plan.scenario.nodes[1];
  EXPECT_EQ(unmeasured.name, "gpu-b");
  EXPECT_TRUE(unmeasured.stages);
  EXPECT_FALSE(unmeasured.holds_ready);
  EXPECT_EQ(unmeasured.write_bytes_per_second, simulation::NodeModel{}.write_bytes_per_second);
  EXPECT_EQ(plan.scenario.nodes[2].name, "gpu-c");
  EXPECT_EQ(plan.scenario.nodes[2].zone, "zone-b");
  EXPECT_EQ(plan.scenario.nodes[2].write_bytes_per_second, 3.0 * kGiB);
}

TEST(RolloutForecastTest, ReplicasNoNodeCanTakeAreCounted) {
  const RolloutPlan plan =
      Plan(RevisionWithStatus(), FiveCaches(), {}, {.replicas = 10, .nic_bytes_per_second = 1e9});
  // gpu-e reports no status: its agent cannot stage anything.
  EXPECT_EQ(plan.staging, std::vector<std::string>({"gpu-b", "gpu-c", "gpu-d"}));
  EXPECT_EQ(plan.unplaceable, 6);
  for (const simulation::NodeModel& node : plan.scenario.nodes) {
    EXPECT_EQ(node.nic_bytes_per_second, 1e9) << node.name;
  }
}

TEST(RolloutForecastTest, EnoughHoldersLeaveNothingToStage) {
  const RolloutPlan plan = Plan(RevisionWithStatus(), FiveCaches(), {}, {.replicas = 1});
  EXPECT_TRUE(plan.staging.empty());
  EXPECT_EQ(plan.unplaceable, 0);
}

TEST(RolloutForecastTest, TheLearnedBudgetSetsTheOriginsRates) {
  const ObjectListing budgets{.items = {Budget(kS3Identity, LearnedStatus()),
                                        Budget("http/https://elsewhere", LearnedStatus())}};
  const RolloutPlan plan = Plan(RevisionWithStatus(), FiveCaches(), budgets, {.replicas = 3});
  ASSERT_EQ(plan.scenario.origins.size(), 1u);
  const simulation::OriginModel& origin = plan.scenario.origins[0];
  EXPECT_EQ(origin.identity, kS3Identity);
  EXPECT_EQ(origin.kind, simulation::OriginKind::kObjectStore);
  EXPECT_EQ(origin.bytes_per_second, 2e9);
  EXPECT_EQ(origin.stream_bytes_per_second, 150e6);
  EXPECT_DOUBLE_EQ(origin.first_byte_seconds, 0.04);
  EXPECT_FALSE(origin.max_streams.has_value());
  ASSERT_TRUE(origin.budget.has_value());
  EXPECT_EQ(origin.budget->streams, 12);
  EXPECT_EQ(origin.budget->knee_streams, 12);
  EXPECT_EQ(origin.budget->phase, controller::BudgetPhase::kHolding);
  EXPECT_EQ(origin.budget->per_stream, 150e6);
  ASSERT_EQ(plan.origins.size(), 1u);
  EXPECT_EQ(plan.origins[0].source_name, "s3");
  EXPECT_EQ(plan.origins[0].bytes_per_second, RateBasis::kMeasured);
  EXPECT_EQ(plan.origins[0].stream_bytes_per_second, RateBasis::kMeasured);
  EXPECT_TRUE(plan.problems.empty());
}

TEST(RolloutForecastTest, FlagsOverrideWhatWasMeasured) {
  const ObjectListing budgets{.items = {Budget(kS3Identity, LearnedStatus())}};
  const RolloutPlan plan =
      Plan(RevisionWithStatus(), FiveCaches(), budgets,
           {.replicas = 3, .origin_bytes_per_second = 5e9, .stream_bytes_per_second = 50e6});
  const simulation::OriginModel& origin = plan.scenario.origins.at(0);
  EXPECT_EQ(origin.bytes_per_second, 5e9);
  EXPECT_EQ(origin.stream_bytes_per_second, 50e6);
  EXPECT_TRUE(origin.budget.has_value());  // the learned streams still start the rollout
  EXPECT_EQ(plan.origins[0].bytes_per_second, RateBasis::kFlag);
  EXPECT_EQ(plan.origins[0].stream_bytes_per_second, RateBasis::kFlag);
}

TEST(RolloutForecastTest, AnUnmeasuredSourceGetsTheSimulatorsDefaults) {
  // A budget without status (the operator created it, nothing was measured) counts as none.
  json unmeasured = Budget(kS3Identity, json::object());
  unmeasured.erase("status");
  const RolloutPlan plan =
      Plan(RevisionWithStatus(), FiveCaches(), {.items = {unmeasured}}, {.replicas = 3});
  const simulation::OriginModel& origin = plan.scenario.origins.at(0);
  EXPECT_EQ(origin.bytes_per_second, 10e9);
  EXPECT_EQ(origin.stream_bytes_per_second, 100e6);
  EXPECT_FALSE(origin.budget.has_value());
  EXPECT_EQ(plan.origins[0].bytes_per_second, RateBasis::kAssumed);
  EXPECT_EQ(plan.origins[0].stream_bytes_per_second, RateBasis::kAssumed);
}

TEST(RolloutForecastTest, CapacityHintsCapTheOrigin) {
  json revision = RevisionWithStatus();
  revision["spec"]["sources"][0]["capacity"] = {{"maxBytesPerSecond", 1'000'000'000},
                                                {"maxConcurrentFetches", 8}};
  const RolloutPlan plan = Plan(revision, FiveCaches(),
                                {.items = {Budget(kS3Identity, LearnedStatus())}}, {.replicas = 3});
  const simulation::OriginModel& origin = plan.scenario.origins.at(0);
  EXPECT_EQ(origin.bytes_per_second, 1e9);
  EXPECT_EQ(origin.max_streams, 8);
  EXPECT_TRUE(plan.origins[0].capped_by_capacity);
  EXPECT_EQ(plan.origins[0].bytes_per_second, RateBasis::kMeasured);
}

TEST(RolloutForecastTest, EverySourceIsAnOriginInSpecOrder) {
  json revision = RevisionWithStatus();
  revision["spec"]["sources"] = json::array(
      {{{"name", "mirror"}, {"type", "http"}, {"http", {{"baseURL", "https://Mirror:8443/m/"}}}},
       {{"name", "nfs"},
        {"type", "sharedFilesystem"},
        {"sharedFilesystem", {{"path", "/mnt/m/"}}}}});
  const RolloutPlan plan = Plan(revision, FiveCaches(), {}, {.replicas = 3});
  ASSERT_EQ(plan.scenario.origins.size(), 2u);
  EXPECT_EQ(plan.scenario.origins[0].identity, "http/https://mirror:8443");
  EXPECT_EQ(plan.scenario.origins[0].kind, simulation::OriginKind::kHttp);
  EXPECT_EQ(plan.scenario.origins[1].identity, "sharedFilesystem//mnt/m");
  EXPECT_EQ(plan.scenario.origins[1].kind, simulation::OriginKind::kSharedFilesystem);
  EXPECT_EQ(plan.origins[1].source_name, "nfs");
}

TEST(RolloutForecastTest, UnlistedOrUnreadableBudgetsAreProblemsNotFailures) {
  json broken = Budget(kS3Identity, LearnedStatus());
  broken["spec"]["source"] = 7;
  const RolloutPlan plan =
      Plan(RevisionWithStatus(), FiveCaches(),
           {.items = {broken}, .unavailable = "not allowed to list them"}, {.replicas = 3});
  ASSERT_EQ(plan.problems.size(), 2u);
  EXPECT_EQ(plan.problems[0], "SourceBudgets could not be listed: not allowed to list them");
  EXPECT_TRUE(plan.problems[1].starts_with("SourceBudget objectstore-0123456789abcdef: "))
      << plan.problems[1];
  EXPECT_EQ(plan.origins.at(0).bytes_per_second, RateBasis::kAssumed);
}

TEST(RolloutForecastTest, WhatCannotBePlannedFails) {
  json revoked = RevisionWithStatus();
  revoked["spec"]["revoked"] = true;
  auto plan = PlanRollout(revoked, FiveCaches(), {}, {.replicas = 3});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().message(),
            "ModelRevision team-a/llama-r2 is revoked and is never staged again");

  plan = PlanRollout(RevisionWithStatus(), {.unavailable = "not allowed to list modelcaches"}, {},
                     {.replicas = 3});
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("not allowed to list modelcaches"), std::string::npos)
      << plan.error().message();

  json ftp = RevisionWithStatus();
  ftp["spec"]["sources"][0]["type"] = "ftp";
  plan = PlanRollout(ftp, FiveCaches(), {}, {.replicas = 3});
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("source s3 has type \"ftp\""), std::string::npos)
      << plan.error().message();
}

// The plan runs as built: the zone with a Ready holder reads nothing from the origin, the other
// zone at most one copy, every node gets the whole model, and none beats its NIC.
TEST(RolloutForecastTest, ThePlanSimulates) {
  json revision = RevisionWithStatus();
  revision["spec"]["files"][0]["size"] = 4 * kGiB;
  revision["spec"]["files"][1]["size"] = 2 * kGiB;
  const RolloutPlan plan = Plan(revision, FiveCaches(), {}, {.replicas = 4});
  ASSERT_EQ(plan.staging, std::vector<std::string>({"gpu-b", "gpu-c", "gpu-d"}));
  const simulation::RolloutOutcome outcome = simulation::Simulate(plan.scenario);
  ASSERT_TRUE(outcome.complete);
  ASSERT_EQ(outcome.nodes.size(), 3u);
  EXPECT_EQ(outcome.origin_bytes_by_zone.count("zone-a"), 0u);
  EXPECT_EQ(outcome.nodes[0].origin_bytes, 0);  // gpu-b, beside the holder
  // At most zone-b's one copy over the two staging zones (the holder may serve zone-b too).
  EXPECT_LE(OriginCopiesPerZone(outcome), 0.5 + 1e-9);
  for (const simulation::NodeOutcome& node : outcome.nodes) {
    EXPECT_NEAR(node.origin_bytes + node.peer_bytes, 6.0 * kGiB, 1e3) << node.name;
  }
  EXPECT_GE(StagingQuantile(outcome, 0.5), 6.0 * kGiB / (25 * kGigabit));
}

}  // namespace
}  // namespace modelplane::cli
