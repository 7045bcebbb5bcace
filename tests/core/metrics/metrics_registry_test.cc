#include "core/metrics/metrics_registry.h"

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

TEST(MetricsRegistryTest, ExposesFamiliesInRegistrationOrderAndChildrenSorted) {
  MetricsRegistry registry;
  auto requests = registry.AddCounter(
      {.name = "http_requests_total", .help = "Requests served.", .label_names = {"code"}});
  ASSERT_TRUE(requests.has_value()) << requests.error().ToString();
  auto in_flight = registry.AddGauge({.name = "fetches_in_flight", .help = "Fetches running."});
  ASSERT_TRUE(in_flight.has_value());
  auto latency = registry.AddHistogram(
      {.name = "fetch_seconds", .help = "Fetch time.", .label_names = {"tier"}}, {0.5, 2});
  ASSERT_TRUE(latency.has_value());

  (*requests)->WithLabels({"500"})->Increment();
  const Counter ok = (*requests)->WithLabels({"200"}).value();
  ok.Increment();
  ok.Increment(2);
  (*in_flight)->WithLabels({})->Set(-3.5);
  (*latency)->WithLabels({"peer"})->Observe(1);

  EXPECT_EQ(registry.ExposeText(),
            "# HELP http_requests_total Requests served.\n"
            "# TYPE http_requests_total counter\n"
            "http_requests_total{code=\"200\"} 3\n"
            "http_requests_total{code=\"500\"} 1\n"
            "# HELP fetches_in_flight Fetches running.\n"
            "# TYPE fetches_in_flight gauge\n"
            "fetches_in_flight -3.5\n"
            "# HELP fetch_seconds Fetch time.\n"
            "# TYPE fetch_seconds histogram\n"
            "fetch_seconds_bucket{tier=\"peer\",le=\"0.5\"} 0\n"
            "fetch_seconds_bucket{tier=\"peer\",le=\"2\"} 1\n"
            "fetch_seconds_bucket{tier=\"peer\",le=\"+Inf\"} 1\n"
            "fetch_seconds_sum{tier=\"peer\"} 1\n"
            "fetch_seconds_count{tier=\"peer\"} 1\n");
}

TEST(MetricsRegistryTest, EscapesLabelValuesAndHelp) {
  MetricsRegistry registry;
  auto family = registry.AddCounter({.name = "odd_total",
                                     .help = "Help with \\ and \"quotes\"\nand a newline.",
                                     .label_names = {"path", "note"}});
  ASSERT_TRUE(family.has_value());
  (*family)->WithLabels({"C:\\models\\\"x\"", "two\nlines"})->Increment();
  EXPECT_EQ(registry.ExposeText(),
            "# HELP odd_total Help with \\\\ and \"quotes\"\\nand a newline.\n"
            "# TYPE odd_total counter\n"
            "odd_total{path=\"C:\\\\models\\\\\\\"x\\\"\",note=\"two\\nlines\"} 1\n");
}

TEST(MetricsRegistryTest, UnlabelledFamiliesExposeZeroBeforeFirstUpdate) {
  MetricsRegistry registry;
  ASSERT_TRUE(registry.AddCounter({.name = "starts_total", .help = "Starts."}));
  EXPECT_EQ(registry.ExposeText(),
            "# HELP starts_total Starts.\n# TYPE starts_total counter\nstarts_total 0\n");
}

TEST(MetricsRegistryTest, HandlesAreStableAndShared) {
  MetricsRegistry registry;
  auto family = registry.AddGauge({.name = "g", .help = "G.", .label_names = {"k"}});
  ASSERT_TRUE(family.has_value());
  const Gauge first = (*family)->WithLabels({"a"}).value();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE((*family)->WithLabels({std::to_string(i)}));
  const Gauge again = (*family)->WithLabels({"a"}).value();
  first.Increment(5);
  again.Decrement(2);
  EXPECT_EQ(first.Value(), 3);
  EXPECT_EQ((*family)->child_count(), 101u);
}

TEST(MetricsRegistryTest, CounterIgnoresNegativeAndNaN) {
  MetricsRegistry registry;
  const Counter counter =
      registry.AddCounter({.name = "c_total", .help = "C."}).value()->WithLabels({}).value();
  counter.Increment(-1);
  counter.Increment(std::nan(""));
  counter.Increment(0.25);
  EXPECT_EQ(counter.Value(), 0.25);
}

TEST(MetricsRegistryTest, RejectsBadDescriptors) {
  MetricsRegistry registry;
  EXPECT_FALSE(registry.AddCounter({.name = "bad-name", .help = "x"}));
  EXPECT_FALSE(registry.AddCounter({.name = "no_help"}));
  EXPECT_FALSE(registry.AddCounter({.name = "x", .help = "x", .label_names = {"__x"}}));
  EXPECT_FALSE(registry.AddCounter({.name = "x", .help = "x", .label_names = {"a", "a"}}));
  EXPECT_FALSE(registry.AddHistogram({.name = "h", .help = "h", .label_names = {"le"}}, {1}));
  EXPECT_FALSE(registry.AddHistogram({.name = "h", .help = "h"}, {2, 1}));
  EXPECT_FALSE(registry.AddGauge({.name = "g", .help = "g", .max_children = 0}));
  EXPECT_EQ(registry.ExposeText(), "");
}

TEST(MetricsRegistryTest, RejectsDuplicateAndCollidingSeriesNames) {
  MetricsRegistry registry;
  ASSERT_TRUE(registry.AddCounter({.name = "dup", .help = "x"}));
  auto duplicate = registry.AddGauge({.name = "dup", .help = "x"});
  ASSERT_FALSE(duplicate);
  EXPECT_EQ(duplicate.error().code(), ErrorCode::kAlreadyExists);

  ASSERT_TRUE(registry.AddHistogram({.name = "latency", .help = "x"}, {1}));
  EXPECT_FALSE(registry.AddGauge({.name = "latency_count", .help = "x"}));
  ASSERT_TRUE(registry.AddGauge({.name = "size_bucket", .help = "x"}));
  EXPECT_FALSE(registry.AddHistogram({.name = "size", .help = "x"}, {1}));
}

TEST(MetricsRegistryTest, RejectsBadLabelValues) {
  MetricsRegistry registry;
  auto family = registry.AddCounter({.name = "c", .help = "x", .label_names = {"a", "b"}});
  ASSERT_TRUE(family.has_value());
  EXPECT_FALSE((*family)->WithLabels({"only one"}));
  EXPECT_FALSE((*family)->WithLabels({"a", "b", "c"}));
  EXPECT_FALSE((*family)->WithLabels({"ok", "\xFF"}));
  EXPECT_FALSE((*family)->WithLabels({"ok", std::string(kMaxLabelValueBytes + 1, 'x')}));
  EXPECT_TRUE((*family)->WithLabels({"ok", std::string(kMaxLabelValueBytes, 'x')}));
}

TEST(MetricsRegistryTest, ChildLimitIsAnError) {
  MetricsRegistry registry;
  auto family =
      registry.AddCounter({.name = "c", .help = "x", .label_names = {"k"}, .max_children = 2});
  ASSERT_TRUE(family.has_value());
  ASSERT_TRUE((*family)->WithLabels({"1"}));
  ASSERT_TRUE((*family)->WithLabels({"2"}));
  auto third = (*family)->WithLabels({"3"});
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().code(), ErrorCode::kResourceExhausted);
  EXPECT_TRUE((*family)->WithLabels({"1"}));  // existing children stay reachable
}

TEST(MetricsRegistryTest, RemovedChildrenAreNoLongerExposedAndFreeTheirPlace) {
  MetricsRegistry registry;
  auto family =
      registry.AddGauge({.name = "g", .help = "G.", .label_names = {"k"}, .max_children = 2});
  ASSERT_TRUE(family.has_value());
  (*family)->WithLabels({"a"}).value().Set(1);
  (*family)->WithLabels({"b"}).value().Set(2);
  EXPECT_TRUE((*family)->Remove({"a"}));
  EXPECT_FALSE((*family)->Remove({"a"}));
  EXPECT_FALSE((*family)->Remove({"a", "extra"}));  // not a key the family has
  EXPECT_EQ(registry.ExposeText(), "# HELP g G.\n# TYPE g gauge\ng{k=\"b\"} 2\n");
  // Under the cap again; a new child starts at 0.
  EXPECT_EQ((*family)->WithLabels({"a"}).value().Value(), 0);
}

// Many threads updating shared handles and creating children while scrapes run: totals are
// exact because every update is one atomic operation, and nothing tears or crashes.
TEST(MetricsRegistryTest, ConcurrentUpdatesGiveExactTotals) {
  MetricsRegistry registry;
  CounterFamily* counters =
      registry.AddCounter({.name = "ops_total", .help = "x", .label_names = {"worker"}}).value();
  GaugeFamily* gauges = registry.AddGauge({.name = "level", .help = "x"}).value();
  HistogramFamily* histograms =
      registry.AddHistogram({.name = "sizes", .help = "x"}, {10, 100}).value();
  const Counter shared = counters->WithLabels({"shared"}).value();
  const Gauge gauge = gauges->WithLabels({}).value();
  const Histogram histogram = histograms->WithLabels({}).value();

  constexpr int kThreads = 8;
  constexpr int kIterations = 20'000;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Counter own = counters->WithLabels({std::to_string(t)}).value();
      for (int i = 0; i < kIterations; ++i) {
        shared.Increment();
        own.Increment(0.5);
        gauge.Increment();
        gauge.Decrement(0.5);
        histogram.Observe(i % 3 == 0 ? 5 : 50);
        if (i % 5000 == 0) (void)registry.ExposeText();
      }
    });
  }
  for (auto& thread : threads) thread.join();

  EXPECT_EQ(shared.Value(), kThreads * kIterations);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(counters->WithLabels({std::to_string(t)})->Value(), kIterations * 0.5);
  }
  EXPECT_EQ(gauge.Value(), kThreads * kIterations * 0.5);
  const HistogramSnapshot snapshot = histogram.Snapshot();
  const std::uint64_t small = kThreads * ((kIterations + 2) / 3);
  EXPECT_EQ(snapshot.count, static_cast<std::uint64_t>(kThreads * kIterations));
  EXPECT_EQ(snapshot.cumulative_counts,
            (std::vector<std::uint64_t>{small, snapshot.count, snapshot.count}));
  EXPECT_EQ(snapshot.sum,
            5.0 * static_cast<double>(small) + 50.0 * static_cast<double>(snapshot.count - small));
}

}  // namespace
}  // namespace modelplane::core
