// Histogram: counts of observations (latencies, request sizes) in fixed buckets, with their sum.
//
// Bucket upper bounds are fixed per family (so every child is comparable) and each child keeps
// one atomic count per bucket, not cumulative, plus an atomic sum: Observe is a binary search and
// two relaxed atomic adds. The exposition turns the per-bucket counts into the cumulative
// `_bucket{le="..."}` series ending in `le="+Inf"`, and derives `_count` from the same counts so
// that `_count` always equals the `+Inf` bucket even while observations race with a scrape.
//
// Thread safety: Observe and Snapshot may be called from any number of threads at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace modelplane::core {

template <typename Handle>
class MetricFamily;

// What one read of a histogram child saw; cumulative_counts has one entry per finite bound and a
// last one for +Inf, which equals count.
struct HistogramSnapshot {
  std::vector<std::uint64_t> cumulative_counts;
  double sum = 0.0;
  std::uint64_t count = 0;
};

class HistogramCell {
 public:
  // Finite, strictly increasing upper bounds; the +Inf bucket is implicit. Validated by the
  // registry before any cell is made.
  struct Shape {
    std::vector<double> upper_bounds;
  };
  static constexpr std::string_view kTypeName = "histogram";

  explicit HistogramCell(const Shape& shape);

  // A value equal to a bound counts in that bound's bucket (Prometheus' `le`); NaN counts only in
  // +Inf and makes the sum NaN, as in the reference Go client.
  void Observe(double value) noexcept;
  [[nodiscard]] HistogramSnapshot Snapshot() const;

  static std::vector<std::string> SampleNames(std::string_view family_name);
  void AppendSamples(std::string& out, std::string_view family_name, std::string_view labels) const;

 private:
  std::span<const double> upper_bounds_;  // owned by the family, which outlives its cells
  std::unique_ptr<std::atomic<std::uint64_t>[]> bucket_counts_;  // upper_bounds_.size() + 1
  std::atomic<double> sum_{0.0};
};

// A cheap copyable reference to one histogram child; valid while its registry lives.
class Histogram {
 public:
  using Cell = HistogramCell;

  void Observe(double value) const noexcept { cell_->Observe(value); }
  [[nodiscard]] HistogramSnapshot Snapshot() const { return cell_->Snapshot(); }

 private:
  friend class MetricFamily<Histogram>;
  explicit Histogram(HistogramCell* cell) : cell_(cell) {}
  HistogramCell* cell_;
};

}  // namespace modelplane::core
