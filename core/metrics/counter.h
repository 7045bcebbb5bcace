// Counter: a value that only goes up (requests served, bytes fetched), and its handle.
//
// A CounterCell is one labelled child of a counter family; it lives as long as the registry that
// created it. Code on hot paths keeps a Counter handle, obtained once from the family, and pays
// one relaxed atomic add per update: no lock, no lookup.
//
// Thread safety: Increment and Value may be called from any number of threads at once.
#pragma once

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

namespace modelplane::core {

template <typename Handle>
class MetricFamily;

class CounterCell {
 public:
  struct Shape {};  // counters need nothing beyond their labels
  static constexpr std::string_view kTypeName = "counter";

  explicit CounterCell(const Shape& /*shape*/) {}

  // Negative and NaN amounts are ignored: a counter that went down would read as a reset to
  // every rate() over it.
  void Increment(double amount) noexcept {
    if (amount > 0) value_.fetch_add(amount, std::memory_order_relaxed);
  }
  [[nodiscard]] double Value() const noexcept { return value_.load(std::memory_order_relaxed); }

  static std::vector<std::string> SampleNames(std::string_view family_name) {
    return {std::string(family_name)};
  }
  void AppendSamples(std::string& out, std::string_view family_name, std::string_view labels) const;

 private:
  std::atomic<double> value_{0.0};
};

// A cheap copyable reference to one counter child; valid while its registry lives.
class Counter {
 public:
  using Cell = CounterCell;

  void Increment(double amount = 1.0) const noexcept { cell_->Increment(amount); }
  [[nodiscard]] double Value() const noexcept { return cell_->Value(); }

 private:
  friend class MetricFamily<Counter>;
  explicit Counter(CounterCell* cell) : cell_(cell) {}
  CounterCell* cell_;
};

}  // namespace modelplane::core
