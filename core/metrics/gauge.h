// Gauge: a value that goes up and down (bytes in the cache, fetches in flight), and its handle.
//
// Like a counter, a gauge child is one atomic double owned by the registry; the Gauge handle is
// looked up once and then costs one atomic operation per update.
//
// Thread safety: every member may be called from any number of threads at once.
#pragma once

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

namespace modelplane::core {

template <typename Handle>
class MetricFamily;

class GaugeCell {
 public:
  struct Shape {};  // gauges need nothing beyond their labels
  static constexpr std::string_view kTypeName = "gauge";

  explicit GaugeCell(const Shape& /*shape*/) {}

  void Set(double value) noexcept { value_.store(value, std::memory_order_relaxed); }
  void Add(double amount) noexcept { value_.fetch_add(amount, std::memory_order_relaxed); }
  [[nodiscard]] double Value() const noexcept { return value_.load(std::memory_order_relaxed); }

  static std::vector<std::string> SampleNames(std::string_view family_name) {
    return {std::string(family_name)};
  }
  void AppendSamples(std::string& out, std::string_view family_name, std::string_view labels) const;

 private:
  std::atomic<double> value_{0.0};
};

// A cheap copyable reference to one gauge child; valid while its registry lives.
class Gauge {
 public:
  using Cell = GaugeCell;

  void Set(double value) const noexcept { cell_->Set(value); }
  void Increment(double amount = 1.0) const noexcept { cell_->Add(amount); }
  void Decrement(double amount = 1.0) const noexcept { cell_->Add(-amount); }
  [[nodiscard]] double Value() const noexcept { return cell_->Value(); }

 private:
  friend class MetricFamily<Gauge>;
  explicit Gauge(GaugeCell* cell) : cell_(cell) {}
  GaugeCell* cell_;
};

}  // namespace modelplane::core
