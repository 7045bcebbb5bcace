#include "core/metrics/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/metrics/text_format.h"

namespace modelplane::core {

HistogramCell::HistogramCell(const Shape& shape)
    : upper_bounds_(shape.upper_bounds),
      bucket_counts_(
          std::make_unique<std::atomic<std::uint64_t>[]>(shape.upper_bounds.size() + 1)) {}

void HistogramCell::Observe(double value) noexcept {
  std::size_t bucket = upper_bounds_.size();
  if (!std::isnan(value)) {
    bucket = static_cast<std::size_t>(
        std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value) -
        upper_bounds_.begin());
  }
  bucket_counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

HistogramSnapshot HistogramCell::Snapshot() const {
  HistogramSnapshot snapshot;
  snapshot.cumulative_counts.reserve(upper_bounds_.size() + 1);
  std::uint64_t running = 0;
  for (std::size_t i = 0; i <= upper_bounds_.size(); ++i) {
    running += bucket_counts_[i].load(std::memory_order_relaxed);
    snapshot.cumulative_counts.push_back(running);
  }
  snapshot.count = running;
  snapshot.sum = sum_.load(std::memory_order_relaxed);
  return snapshot;
}

std::vector<std::string> HistogramCell::SampleNames(std::string_view family_name) {
  const std::string name(family_name);
  return {name, name + "_bucket", name + "_sum", name + "_count"};
}

void HistogramCell::AppendSamples(std::string& out, std::string_view family_name,
                                  std::string_view labels) const {
  const HistogramSnapshot snapshot = Snapshot();
  const std::string name(family_name);
  std::string bucket_labels;
  for (std::size_t i = 0; i < snapshot.cumulative_counts.size(); ++i) {
    bucket_labels.assign(labels);
    if (!bucket_labels.empty()) bucket_labels += ',';
    bucket_labels += "le=\"";
    AppendSampleValue(bucket_labels, i < upper_bounds_.size()
                                         ? upper_bounds_[i]
                                         : std::numeric_limits<double>::infinity());
    bucket_labels += '"';
    AppendSampleLine(out, name + "_bucket", bucket_labels,
                     static_cast<double>(snapshot.cumulative_counts[i]));
  }
  AppendSampleLine(out, name + "_sum", labels, snapshot.sum);
  AppendSampleLine(out, name + "_count", labels, static_cast<double>(snapshot.count));
}

}  // namespace modelplane::core
