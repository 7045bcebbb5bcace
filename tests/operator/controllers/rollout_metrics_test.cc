#include "operator/controllers/rollout_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kStart = 1'800'000'000;
constexpr std::string_view kLabels =
    R"({namespace="models",kind="Deployment",workload="llama",revision="llama-r2"})";

RolloutReadiness Llama(int ready, bool barrier, std::optional<double> staging_seconds) {
  return {.namespace_name = "models",
          .kind = "Deployment",
          .workload = "llama",
          .replicas = 4,
          .ready_replicas = ready,
          .barrier = barrier,
          .staging_seconds = staging_seconds};
}

std::string Sample(std::string_view name, std::string_view value) {
  return std::string(name) + std::string(kLabels) + " " + std::string(value) + "\n";
}

TEST(RolloutMetricsTest, ARolloutIsShownFromItsBarrierUntilItIsOver) {
  core::MetricsRegistry registry;
  auto metrics = RolloutMetrics::Register(registry);
  ASSERT_TRUE(metrics.has_value());
  RolloutMetrics& rollouts = **metrics;

  // Pods rolling without waiting for weights (an image change): not a model rollout.
  rollouts.Update("models/llama-r2", {Llama(1, false, std::nullopt)}, kStart - 60);
  EXPECT_THAT(registry.ExposeText(), Not(HasSubstr("workload=")));

  // The barrier appears; the budget has no rate yet: no prediction.
  rollouts.Update("models/llama-r2", {Llama(0, true, std::nullopt)}, kStart);
  std::string text = registry.ExposeText();
  EXPECT_THAT(text, HasSubstr(Sample("modelplane_rollout_replicas", "4")));
  EXPECT_THAT(text, HasSubstr(Sample("modelplane_rollout_ready_replicas", "0")));
  EXPECT_THAT(text, HasSubstr(Sample("modelplane_rollout_start_time_seconds", "1800000000")));
  EXPECT_THAT(text, Not(HasSubstr("modelplane_rollout_predicted_ready_seconds{")));

  // 30 s later the budget has a rate: 600 s more, so 630 s after the start. Kept from then on.
  rollouts.Update("models/llama-r2", {Llama(0, true, 600)}, kStart + 30);
  rollouts.Update("models/llama-r2", {Llama(2, true, 10)}, kStart + 300);
  text = registry.ExposeText();
  EXPECT_THAT(text, HasSubstr(Sample("modelplane_rollout_predicted_ready_seconds", "630")));
  EXPECT_THAT(text, HasSubstr(Sample("modelplane_rollout_ready_replicas", "2")));
  EXPECT_THAT(text, HasSubstr(Sample("modelplane_rollout_start_time_seconds", "1800000000")));

  // The barrier is gone (no old pods left) but the workload is not complete: still shown.
  rollouts.Update("models/llama-r2", {Llama(3, false, std::nullopt)}, kStart + 400);
  EXPECT_THAT(registry.ExposeText(), HasSubstr(Sample("modelplane_rollout_ready_replicas", "3")));

  // Complete (the caller lists it no more): every series goes.
  rollouts.Update("models/llama-r2", {}, kStart + 500);
  EXPECT_THAT(registry.ExposeText(), Not(HasSubstr("workload=")));

  // A later rollout to the same revision starts its own clock.
  rollouts.Update("models/llama-r2", {Llama(0, true, 0)}, kStart + 900);
  text = registry.ExposeText();
  EXPECT_THAT(text, HasSubstr(Sample("modelplane_rollout_start_time_seconds", "1800000900")));
  EXPECT_THAT(text, HasSubstr(Sample("modelplane_rollout_predicted_ready_seconds", "0")));
}

TEST(RolloutMetricsTest, RevisionsAreUpdatedApart) {
  core::MetricsRegistry registry;
  auto metrics = RolloutMetrics::Register(registry);
  ASSERT_TRUE(metrics.has_value());
  RolloutReadiness other = Llama(1, true, 5);
  other.workload = "mistral";
  (*metrics)->Update("models/llama-r2", {Llama(0, true, 5)}, kStart);
  (*metrics)->Update("models/mistral-r2", {other}, kStart);
  (*metrics)->Update("models/mistral-r2", {}, kStart + 1);
  const std::string text = registry.ExposeText();
  EXPECT_THAT(text, HasSubstr(Sample("modelplane_rollout_replicas", "4")));
  EXPECT_THAT(text, Not(HasSubstr("mistral")));
}

}  // namespace
}  // namespace modelplane::controller
