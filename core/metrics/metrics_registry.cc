#include "core/metrics/metrics_registry.h"

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "core/metrics/histogram_buckets.h"
#include "core/metrics/metric_names.h"

namespace modelplane::core {
namespace {

Status ValidateDescriptor(const MetricDescriptor& descriptor) {
  if (auto valid = ValidateMetricName(descriptor.name); !valid) return valid;
  if (descriptor.help.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("metric {} has no help text", descriptor.name));
  }
  if (!IsValidUtf8(descriptor.help)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("metric {} help text is not UTF-8", descriptor.name));
  }
  if (descriptor.label_names.size() > kMaxLabelNames) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("metric {} has {} label names, more than the limit of {}",
                                 descriptor.name, descriptor.label_names.size(), kMaxLabelNames));
  }
  std::set<std::string_view> seen;
  for (const std::string& label : descriptor.label_names) {
    if (auto valid = ValidateLabelName(label); !valid) {
      return std::unexpected(valid.error().Wrap(fmt::format("metric {}", descriptor.name)));
    }
    if (!seen.insert(label).second) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("metric {} names label {} twice", descriptor.name, label));
    }
  }
  if (descriptor.max_children == 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("metric {} allows no children", descriptor.name));
  }
  return Ok();
}

}  // namespace

template <typename Handle>
Result<MetricFamily<Handle>*> MetricsRegistry::Add(MetricDescriptor descriptor,
                                                   typename Handle::Cell::Shape shape) {
  if (auto valid = ValidateDescriptor(descriptor); !valid) return std::unexpected(valid.error());
  const std::vector<std::string> sample_names = Handle::Cell::SampleNames(descriptor.name);

  const std::lock_guard lock(mutex_);
  if (families_.size() >= kMaxMetricFamilies) {
    return MakeError(ErrorCode::kResourceExhausted,
                     fmt::format("cannot add metric {}: the registry already holds {} families",
                                 descriptor.name, kMaxMetricFamilies));
  }
  for (const std::string& sample_name : sample_names) {
    if (sample_names_.contains(sample_name)) {
      return MakeError(ErrorCode::kAlreadyExists,
                       fmt::format("cannot add metric {}: series name {} is already registered",
                                   descriptor.name, sample_name));
    }
  }
  const bool unlabelled = descriptor.label_names.empty();
  auto family = std::make_unique<MetricFamily<Handle>>(std::move(descriptor), std::move(shape));
  if (unlabelled) {
    if (auto child = family->WithLabels({}); !child) return std::unexpected(child.error());
  }
  MetricFamily<Handle>* result = family.get();
  families_.push_back(std::move(family));
  sample_names_.insert(sample_names.begin(), sample_names.end());
  return result;
}

Result<CounterFamily*> MetricsRegistry::AddCounter(MetricDescriptor descriptor) {
  return Add<Counter>(std::move(descriptor), {});
}

Result<GaugeFamily*> MetricsRegistry::AddGauge(MetricDescriptor descriptor) {
  return Add<Gauge>(std::move(descriptor), {});
}

Result<HistogramFamily*> MetricsRegistry::AddHistogram(MetricDescriptor descriptor,
                                                       std::vector<double> upper_bounds) {
  if (std::find(descriptor.label_names.begin(), descriptor.label_names.end(), "le") !=
      descriptor.label_names.end()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("histogram {} may not use the label name le: the buckets use it",
                                 descriptor.name));
  }
  if (auto valid = ValidateBucketBounds(upper_bounds); !valid) {
    return std::unexpected(valid.error().Wrap(fmt::format("histogram {}", descriptor.name)));
  }
  return Add<Histogram>(std::move(descriptor), HistogramCell::Shape{std::move(upper_bounds)});
}

std::string MetricsRegistry::ExposeText() const {
  std::string out;
  const std::lock_guard lock(mutex_);
  for (const auto& family : families_) family->AppendText(out);
  return out;
}

}  // namespace modelplane::core
