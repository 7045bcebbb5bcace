#include "operator/admission/source_budget.h"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

// A source whose throughput grows with streams up to its knee and then stays flat; it answers
// 503 SlowDown to more than `throttle_above` streams and slows its first byte past the knee.
struct SimulatedSource {
  int knee = 10;
  double per_stream = 50e6;
  int throttle_above = 0;  // 0: never throttles

  SourceObservation Observe(int streams) const {
    SourceObservation observation{.streams_in_use = streams, .requests_ok = 100 * streams};
    observation.bytes_per_second = per_stream * std::min(streams, knee);
    observation.ttfb_seconds = 0.02 * std::max(1.0, static_cast<double>(streams) / knee);
    if (throttle_above > 0 && streams > throttle_above)
      observation.throttled = streams - throttle_above;
    return observation;
  }
};

struct BudgetRun {
  std::vector<SourceBudget> steps;
};

BudgetRun Simulate(const SimulatedSource& source, const SourceCeiling& ceiling, int steps) {
  BudgetRun run;
  SourceBudget budget = InitialBudget(ceiling);
  for (int i = 0; i < steps; ++i) {
    budget = StepBudget(budget, source.Observe(budget.streams), ceiling);
    run.steps.push_back(budget);
  }
  return run;
}

TEST(SourceBudgetTest, ConvergesToTheKneeWithinTenPercent) {
  for (int knee : {6, 10, 23, 64, 150}) {
    const SimulatedSource source{.knee = knee};
    const BudgetRun run = Simulate(source, {}, 120);
    // Bounded: doubling to past the knee, then one stream per probe interval.
    const int bound = 12 + kProbeEvery * static_cast<int>(0.5 * knee + 2);
    int converged_at = -1;
    for (int i = 0; i < static_cast<int>(run.steps.size()); ++i) {
      const SourceBudget& step = run.steps[i];
      if (step.phase == BudgetPhase::kHolding && step.knee_streams >= 0.9 * knee &&
          step.knee_streams <= 1.1 * knee + 1) {
        converged_at = i;
        break;
      }
    }
    ASSERT_GE(converged_at, 0) << "knee " << knee << " never found";
    EXPECT_LE(converged_at, bound) << "knee " << knee;
    for (std::size_t i = converged_at; i < run.steps.size(); ++i) {
      EXPECT_GE(run.steps[i].knee_streams, 0.9 * knee) << "knee " << knee << " step " << i;
      EXPECT_LE(run.steps[i].streams, 1.1 * knee + 1) << "knee " << knee << " step " << i;
    }
  }
}

// The rate rollouts predict from: what the converged budget's streams deliver, about the
// source's real throughput at the knee; nothing before anything was measured.
TEST(SourceBudgetTest, BytesPerSecondIsWhatTheBudgetsStreamsDeliver) {
  const SimulatedSource source{.knee = 10, .per_stream = 50e6};
  EXPECT_FALSE(BudgetBytesPerSecond(InitialBudget({})));
  const BudgetRun run = Simulate(source, {}, 60);
  const auto rate = BudgetBytesPerSecond(run.steps.back());
  ASSERT_TRUE(rate.has_value());
  EXPECT_GE(*rate, 0.9 * 500e6);
  EXPECT_LE(*rate, 500e6);  // never more than the best throughput seen
  // A byte-rate ceiling caps it, and is the rate before anything was measured.
  const SourceCeiling ceiling{.max_bytes_per_second = 100'000'000};
  EXPECT_EQ(BudgetBytesPerSecond(InitialBudget(ceiling)), 100e6);
  EXPECT_EQ(BudgetBytesPerSecond(Simulate(source, ceiling, 60).steps.back()), 100e6);
}

TEST(SourceBudgetTest, ConvergesThroughMeasurementNoise) {
  // Each interval's throughput is off by up to 5% either way, from a fixed seed.
  std::mt19937 random(7);
  std::uniform_real_distribution<double> noise(0.95, 1.05);
  for (int knee : {12, 40}) {
    const SimulatedSource source{.knee = knee};
    SourceBudget budget = InitialBudget({});
    int near = 0;
    for (int i = 0; i < 200; ++i) {
      SourceObservation observation = source.Observe(budget.streams);
      observation.bytes_per_second *= noise(random);
      budget = StepBudget(budget, observation, {});
      if (i >= 100 && budget.streams >= 0.9 * knee && budget.streams <= 1.1 * knee + 1) ++near;
    }
    EXPECT_GE(near, 90) << "knee " << knee << ": within 10% for 90 of the last 100 steps";
  }
}

TEST(SourceBudgetTest, CutsAtOnceOnSlowDown) {
  const SimulatedSource source{.knee = 100, .throttle_above = 12};
  const SourceCeiling ceiling;
  SourceBudget budget = InitialBudget(ceiling);
  int cuts = 0;
  int within = 0;
  for (int i = 0; i < 80; ++i) {
    if (budget.streams >= 8 && budget.streams <= 12) ++within;
    const SourceObservation observation = source.Observe(budget.streams);
    const SourceBudget next = StepBudget(budget, observation, ceiling);
    if (observation.throttled > 0) {
      ++cuts;
      EXPECT_LE(next.streams, static_cast<int>(budget.streams * kCutFactor)) << "step " << i;
      EXPECT_EQ(next.phase, BudgetPhase::kCut);
      EXPECT_NE(next.last_reason.find("throttled"), std::string::npos);
    }
    budget = next;
  }
  EXPECT_GE(cuts, 1);
  EXPECT_LE(cuts, 12) << "probes above the limit now and then, not on every step";
  EXPECT_GE(within, 64) << "most of the time near what the source takes";
}

TEST(SourceBudgetTest, NeverAboveItsCeilings) {
  const SourceCeiling ceiling{.max_streams = 5, .max_bytes_per_second = 200'000'000};
  const BudgetRun run = Simulate(SimulatedSource{.knee = 40}, ceiling, 60);
  for (const SourceBudget& step : run.steps) {
    EXPECT_LE(step.streams, 5);
    EXPECT_EQ(step.bytes_per_second, 200'000'000);
  }
  EXPECT_EQ(run.steps.back().streams, 5);
  EXPECT_LE(InitialBudget({.max_streams = 2}).streams, 2);
}

TEST(SourceBudgetTest, AnUnusedBudgetDoesNotGrow) {
  SourceBudget budget = InitialBudget({});
  for (int i = 0; i < 20; ++i) {
    budget =
        StepBudget(budget, {.bytes_per_second = 1e8, .streams_in_use = 1, .requests_ok = 10}, {});
  }
  EXPECT_EQ(budget.streams, kInitialStreams);
}

TEST(SourceBudgetTest, RisingLatencyAndErrorsCut) {
  SourceBudget budget = InitialBudget({});
  budget = StepBudget(
      budget,
      {.bytes_per_second = 1e8, .streams_in_use = 4, .requests_ok = 50, .ttfb_seconds = 0.01}, {});
  const int before = budget.streams;
  const SourceBudget slow = StepBudget(
      budget,
      {.bytes_per_second = 1e8, .streams_in_use = before, .requests_ok = 50, .ttfb_seconds = 0.08},
      {});
  EXPECT_LT(slow.streams, before);
  EXPECT_NE(slow.last_reason.find("time to first byte"), std::string::npos);
  // Four times a fast source's 10 ms is jitter, not queueing: no cut below the floor.
  const SourceBudget jitter = StepBudget(
      budget,
      {.bytes_per_second = 1e8, .streams_in_use = before, .requests_ok = 50, .ttfb_seconds = 0.04},
      {});
  EXPECT_NE(jitter.phase, BudgetPhase::kCut);
  const SourceBudget failing = StepBudget(
      budget, {.bytes_per_second = 1e8, .streams_in_use = before, .requests_ok = 80, .errors = 20},
      {});
  EXPECT_LT(failing.streams, before);
  EXPECT_EQ(StepBudget(budget, {.streams_in_use = before, .timeouts = 1}, {}).phase,
            BudgetPhase::kCut);
  // Never below one stream.
  SourceBudget floor = InitialBudget({});
  for (int i = 0; i < 10; ++i) floor = StepBudget(floor, {.streams_in_use = 8, .throttled = 5}, {});
  EXPECT_EQ(floor.streams, 1);
}

}  // namespace
}  // namespace modelplane::controller
