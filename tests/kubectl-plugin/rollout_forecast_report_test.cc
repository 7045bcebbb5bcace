// `plan`'s output for a plan and an outcome given here (not simulated), so that every number and
// the limit it names are known.
#include "kubectl-plugin/rollout_forecast_report.h"

#include <gtest/gtest.h>

#include "tests/kubectl-plugin/test_objects.h"

namespace modelplane::cli {
namespace {

using simulation::kGigabit;
using simulation::NodeOutcome;
using simulation::RolloutOutcome;
using testing::FieldValue;
using testing::kGiB;

constexpr double kModelBytes = 10.0 * kGiB;

// gpu-a holds it Ready in zone-a; gpu-b (zone-a) and gpu-c (zone-b, a 1 GiB/s disk) stage it.
RolloutPlan TwoZonePlan() {
  RolloutPlan plan{.revision = "team-a/llama-r2",
                   .holders = {"gpu-a"},
                   .staging = {"gpu-b", "gpu-c"},
                   .replicas = 3,
                   .measured_disks = 1};
  plan.scenario.file_sizes = {6 * kGiB, 4 * kGiB};
  const double nic = 25 * kGigabit;
  plan.scenario.nodes = {{.name = "gpu-a",
                          .zone = "zone-a",
                          .nic_bytes_per_second = nic,
                          .stages = false,
                          .holds_ready = true},
                         {.name = "gpu-b", .zone = "zone-a", .nic_bytes_per_second = nic},
                         {.name = "gpu-c",
                          .zone = "zone-b",
                          .nic_bytes_per_second = nic,
                          .write_bytes_per_second = 1.0 * kGiB}};
  controller::SourceBudget budget;
  budget.streams = 12;
  plan.scenario.origins = {{.identity = "objectStore/aws:/models",
                            .bytes_per_second = 2.0 * kGiB,
                            .stream_bytes_per_second = 128.0 * 1024 * 1024,
                            .budget = budget}};
  plan.origins = {{.source_name = "s3",
                   .bytes_per_second = RateBasis::kMeasured,
                   .stream_bytes_per_second = RateBasis::kMeasured}};
  return plan;
}

// The notes are word-wrapped paragraphs: their lines joined, so a check need not know where.
std::string Unwrapped(const std::string& text) {
  std::string flat;
  for (const std::string& line : testing::Lines(text)) flat += line + " ";
  return flat;
}

NodeOutcome Staged(const std::string& name, const std::string& zone, double ready_at,
                   bool from_origin) {
  return {.name = name,
          .zone = zone,
          .ready_at = ready_at,
          .origin_bytes = from_origin ? kModelBytes : 0,
          .peer_bytes = from_origin ? 0 : kModelBytes};
}

// gpu-b reads from the holder beside it, gpu-c seeds zone-b from the origin.
RolloutOutcome Outcome(double b_ready, bool b_from_origin, double c_ready, bool c_from_origin) {
  RolloutOutcome outcome{.complete = true, .model_bytes = kModelBytes};
  outcome.nodes = {Staged("gpu-b", "zone-a", b_ready, b_from_origin),
                   Staged("gpu-c", "zone-b", c_ready, c_from_origin)};
  for (const NodeOutcome& node : outcome.nodes) {
    if (node.origin_bytes > 0) outcome.origin_bytes_by_zone[node.zone] += node.origin_bytes;
  }
  outcome.finished_at = std::max(b_ready, c_ready);
  outcome.peak_peer_upload_bytes_per_second = 1.5 * kGiB;
  return outcome;
}

TEST(RolloutForecastReportTest, TheLowerBoundIsTheSlowestStagingNodes) {
  RolloutPlan plan = TwoZonePlan();
  EXPECT_DOUBLE_EQ(SlowestLowerBound(plan), 10.0);  // gpu-c's disk, not gpu-b's 25 Gbit/s NIC
  plan.scenario.nodes[2].stages = false;
  EXPECT_DOUBLE_EQ(SlowestLowerBound(plan), kModelBytes / (25 * kGigabit));
}

TEST(RolloutForecastReportTest, ThePlanAndThePredictionWithEveryNumber) {
  const RolloutPlan plan = TwoZonePlan();
  const std::string text = RenderRolloutForecast(plan, Outcome(8, false, 12, true));
  EXPECT_EQ(FieldValue(text, "Revision"), "team-a/llama-r2 (10.0 GiB in 2 files)");
  EXPECT_EQ(FieldValue(text, "Replicas"),
            "3 asked: 1 already Ready (gpu-a), 2 to stage (gpu-b, gpu-c)");
  EXPECT_EQ(FieldValue(text, "Zones"), "zone-a 1 staging, 1 Ready; zone-b 1 staging, 0 Ready");
  EXPECT_EQ(FieldValue(text, "NIC"),
            "25 Gbit/s each way on every node (--nic-gbps; not in the API)");
  EXPECT_EQ(FieldValue(text, "Disks"),
            "1 of 2 staging nodes measured; the others assumed not to limit");
  EXPECT_EQ(FieldValue(text, "Origin"),
            "s3 (objectStore/aws:/models): 2.0 GiB/s in all (measured), 128.0 MiB/s a stream "
            "(measured); budget 12 streams learned");
  EXPECT_EQ(FieldValue(text, "Time-to-ready"),
            "p50 8.0s, p99 12.0s; all 2 Ready after 12.0s (queued to Ready)");
  EXPECT_EQ(FieldValue(text, "Lower bound"),
            "10.0s (10.0 GiB at 1.0 GiB/s, the slowest staging node's disk)");
  EXPECT_EQ(FieldValue(text, "Origin copies"),
            "0.50 per staging zone (10.0 GiB read from origins)");
  EXPECT_EQ(FieldValue(text, "Limited by"),
            "each node's own NIC or disk: the last node is Ready after 12.0s, within 25% of the "
            "lower bound; only faster nodes would shorten it");
  const std::string flat = Unwrapped(text);
  EXPECT_NE(flat.find("A prediction from the rollout simulator (docs/scale.md)"),
            std::string::npos);
  EXPECT_NE(flat.find("failures, evictions or other rollouts at the same time"), std::string::npos);
  EXPECT_EQ(text.find("has not measured"), std::string::npos) << text;
  EXPECT_TRUE(testing::FitsTerminal(text)) << text;
}

TEST(RolloutForecastReportTest, LateSeedersMeanTheOriginLimits) {
  const RolloutPlan plan = TwoZonePlan();
  const RolloutOutcome outcome = Outcome(30, true, 40, true);
  EXPECT_EQ(LimitOf(plan, outcome), RolloutLimit::kOriginSeeders);
  EXPECT_EQ(FieldValue(RenderRolloutForecast(plan, outcome), "Limited by"),
            "the origin's rate for the zone seeders: 2 seeders read the model from origins, the "
            "last Ready after 40.0s of 40.0s; a faster origin or more streams would shorten it");
}

TEST(RolloutForecastReportTest, EarlySeedersMeanTheFanOutLimits) {
  const RolloutPlan plan = TwoZonePlan();
  const RolloutOutcome outcome = Outcome(12, true, 60, false);
  EXPECT_EQ(LimitOf(plan, outcome), RolloutLimit::kFanOut);
  EXPECT_EQ(FieldValue(RenderRolloutForecast(plan, outcome), "Limited by"),
            "the fan-out inside the zones: 1 seeder Ready after 12.0s, the last node after "
            "1m00s; the busiest node served peers at 1.5 GiB/s");
  const RolloutOutcome from_holders = Outcome(12, false, 60, false);
  EXPECT_EQ(LimitOf(plan, from_holders), RolloutLimit::kFanOut);
  EXPECT_TRUE(FieldValue(RenderRolloutForecast(plan, from_holders), "Limited by")
                  .starts_with("the fan-out from the nodes that hold it (no node reads origins)"));
}

TEST(RolloutForecastReportTest, AnUnfinishedRolloutSaysHowFarItGot) {
  const RolloutPlan plan = TwoZonePlan();
  RolloutOutcome outcome = Outcome(30, true, -1, true);
  outcome.complete = false;
  outcome.finished_at = kForecastHorizonSeconds;
  EXPECT_EQ(FieldValue(RenderRolloutForecast(plan, outcome), "Time-to-ready"),
            "only 1 of 2 Ready within 4h00m (the forecast's horizon); p50 of those 30.0s");
  // The seeder that never finished is as late as the horizon: the origin limits.
  EXPECT_EQ(LimitOf(plan, outcome), RolloutLimit::kOriginSeeders);
}

TEST(RolloutForecastReportTest, AssumedRatesAndMissingNodesAreSaid) {
  RolloutPlan plan = TwoZonePlan();
  plan.origins[0].bytes_per_second = RateBasis::kFlag;
  plan.origins[0].stream_bytes_per_second = RateBasis::kAssumed;
  plan.origins[0].capped_by_capacity = true;
  plan.scenario.origins[0].budget.reset();
  plan.replicas = 9;
  plan.unplaceable = 6;
  plan.problems = {"SourceBudgets could not be listed: not allowed"};
  const std::string text = RenderRolloutForecast(plan, Outcome(8, false, 12, true));
  EXPECT_EQ(FieldValue(text, "Origin"),
            "s3 (objectStore/aws:/models): 2.0 GiB/s in all (--origin-gbps, capped by its "
            "capacity hint), 128.0 MiB/s a stream (assumed)");
  const std::string flat = Unwrapped(text);
  EXPECT_NE(flat.find("6 of the 9 replicas asked for have no node"), std::string::npos) << text;
  EXPECT_NE(flat.find("The fleet has not measured source s3 yet"), std::string::npos) << text;
  EXPECT_NE(flat.find("--origin-gbps and --stream-mbps set them"), std::string::npos) << text;
  EXPECT_NE(flat.find("SourceBudgets could not be listed: not allowed"), std::string::npos) << text;
  EXPECT_TRUE(testing::FitsTerminal(text)) << text;
}

TEST(RolloutForecastReportTest, NothingToStageNamesTheHolders) {
  RolloutPlan plan = TwoZonePlan();
  plan.replicas = 2;
  plan.staging.clear();
  plan.holders = {"gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5", "gpu-6", "gpu-7"};
  EXPECT_EQ(LimitOf(plan, {}), RolloutLimit::kNothingToStage);
  const std::string text = RenderRolloutForecast(plan, {});
  EXPECT_EQ(FieldValue(text, "Replicas"),
            "2 asked: 7 already Ready (gpu-1, gpu-2, gpu-3, gpu-4, gpu-5 and 2 more), 0 to stage");
  EXPECT_EQ(FieldValue(text, "Prediction"), "nothing to stage: enough nodes hold it Ready");
  EXPECT_EQ(FieldValue(text, "Time-to-ready"), "");
}

}  // namespace
}  // namespace modelplane::cli
