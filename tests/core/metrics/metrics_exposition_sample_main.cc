// Prints a Prometheus exposition full of awkward cases for
// test_exposition_with_prometheus_client.py to parse with the reference Python parser. The values
// here and there must agree.
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "core/metrics/metrics_registry.h"

namespace modelplane::core {
namespace {

int Run() {
  MetricsRegistry registry;
  auto requests = registry.AddCounter({.name = "sample_requests_total",
                                       .help = "Requests with \\ backslash and\nnewline in help.",
                                       .label_names = {"path", "note"}});
  auto temperature = registry.AddGauge(
      {.name = "sample_temperature", .help = "Special values.", .label_names = {"case"}});
  auto fetch = registry.AddHistogram(
      {.name = "sample_fetch_seconds", .help = "Fetch time.", .label_names = {"tier"}},
      {0.005, 0.1, 1, 2.5, 60});
  auto empty =
      registry.AddHistogram({.name = "sample_empty_seconds", .help = "Never observed."}, {1, 2});
  if (!requests || !temperature || !fetch || !empty) return EXIT_FAILURE;

  (*requests)->WithLabels({"C:\\models\\\"quoted\"", "plain"})->Increment(3);
  (*requests)
      ->WithLabels({"line1\nline2", "mod\xC3\xA8le \xF0\x9F\x98\x80 \xE6\xA8\xA1\xE5\x9E\x8B"})
      ->Increment(1.5);
  (*requests)->WithLabels({"", "trailing backslash \\"})->Increment();
  (*requests)->WithLabels({"{braces},=commas", "tab\there"})->Increment(7);

  const double infinity = std::numeric_limits<double>::infinity();
  (*temperature)->WithLabels({"plus_inf"})->Set(infinity);
  (*temperature)->WithLabels({"minus_inf"})->Set(-infinity);
  (*temperature)->WithLabels({"nan"})->Set(std::numeric_limits<double>::quiet_NaN());
  (*temperature)->WithLabels({"tiny"})->Set(1e-7);
  (*temperature)->WithLabels({"huge"})->Set(1.5e300);
  (*temperature)->WithLabels({"negative"})->Set(-42.125);

  const Histogram peer = (*fetch)->WithLabels({"peer"}).value();
  for (const double seconds : {0.001, 0.005, 0.05, 0.5, 1.0, 3.0, 120.0}) peer.Observe(seconds);
  const Histogram object_store = (*fetch)->WithLabels({"object \"store\""}).value();
  object_store.Observe(2.5);

  const std::string text = registry.ExposeText();
  std::fwrite(text.data(), 1, text.size(), stdout);
  return std::fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

}  // namespace
}  // namespace modelplane::core

int main() {
  return modelplane::core::Run();
}
