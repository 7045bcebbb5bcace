// MetricsRegistry: owns every metric family of one process and renders them in the Prometheus
// text exposition format 0.0.4 for the /metrics endpoint.
//
// Design: families are registered once at start-up (AddCounter, AddGauge, AddHistogram) with
// validated names, help text and fixed label names; registration fails cleanly on a bad or
// duplicate name, including a histogram whose `_bucket`/`_sum`/`_count` series would collide
// with another family. The registry hands out non-owning pointers to its families; code takes
// child handles from them (family->WithLabels({...})) once and updates those on hot paths with a
// single atomic operation. Nothing is global: each binary creates one registry in main and
// passes it to the components that record metrics, and its ExposeText to the HTTP server.
// Families expose in registration order, children in label-value order.
//
// Thread safety: all members may be called from any number of threads at once. Families and
// handles stay valid until the registry is destroyed.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"
#include "core/metrics/counter.h"
#include "core/metrics/gauge.h"
#include "core/metrics/histogram.h"
#include "core/metrics/metric_family.h"

namespace modelplane::core {

using CounterFamily = MetricFamily<Counter>;
using GaugeFamily = MetricFamily<Gauge>;
using HistogramFamily = MetricFamily<Histogram>;

// The Content-Type that goes with ExposeText's output.
inline constexpr std::string_view kPrometheusTextContentType =
    "text/plain; version=0.0.4; charset=utf-8";

inline constexpr std::size_t kMaxMetricFamilies = 1000;
inline constexpr std::size_t kMaxLabelNames = 16;

class MetricsRegistry {
 public:
  MetricsRegistry() = default;
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // A family without label names gets its single child at once, so it exposes 0 before the
  // first update.
  [[nodiscard]] Result<CounterFamily*> AddCounter(MetricDescriptor descriptor);
  [[nodiscard]] Result<GaugeFamily*> AddGauge(MetricDescriptor descriptor);
  // upper_bounds: finite and strictly increasing (see histogram_buckets.h); "le" may not be a
  // label name.
  [[nodiscard]] Result<HistogramFamily*> AddHistogram(MetricDescriptor descriptor,
                                                      std::vector<double> upper_bounds);

  // The whole exposition, every family, as one string.
  [[nodiscard]] std::string ExposeText() const;

 private:
  template <typename Handle>
  Result<MetricFamily<Handle>*> Add(MetricDescriptor descriptor,
                                    typename Handle::Cell::Shape shape);

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<MetricFamilyBase>> families_;
  std::set<std::string, std::less<>> sample_names_;  // every series name taken so far
};

}  // namespace modelplane::core
