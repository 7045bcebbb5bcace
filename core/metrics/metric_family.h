// A metric family: one name, help text and fixed label names, with one child per distinct tuple
// of label values (a Counter, Gauge or Histogram cell).
//
// Children are created on first use and stay, so a handle taken once stays valid for the
// registry's lifetime and hot paths never look anything up. The one exception is Remove, for
// families whose series describe objects that come and go (a rollout in progress): their users
// look the child up at each update and keep no handle. The number of children is capped
// (max_children) because every distinct label value is a time series someone pays to store; a
// label fed from unbounded input (paths, pod names) hits the cap as an error instead of growing
// without limit. Children expose in label-value order, so the output is deterministic.
//
// Thread safety: WithLabels and AppendText may be called from any number of threads at once;
// they serialise on the family's mutex. Updates through handles never take it.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error/error.h"
#include "core/metrics/text_format.h"

namespace modelplane::core {

inline constexpr std::size_t kDefaultMaxChildren = 10'000;
// Longer values are almost certainly not meant as labels (a log line, a request body).
inline constexpr std::size_t kMaxLabelValueBytes = 1024;

struct MetricDescriptor {
  std::string name;                           // e.g. "modelplane_fetch_bytes_total"
  std::string help = {};                      // one sentence; must not be empty
  std::vector<std::string> label_names = {};  // fixed for the family
  std::size_t max_children = kDefaultMaxChildren;
};

class MetricFamilyBase {
 public:
  explicit MetricFamilyBase(MetricDescriptor descriptor) : descriptor_(std::move(descriptor)) {}
  MetricFamilyBase(const MetricFamilyBase&) = delete;
  MetricFamilyBase& operator=(const MetricFamilyBase&) = delete;
  virtual ~MetricFamilyBase() = default;

  [[nodiscard]] const MetricDescriptor& descriptor() const { return descriptor_; }
  [[nodiscard]] virtual std::string_view type_name() const = 0;

  // Appends the family's `# HELP`, `# TYPE` and sample lines.
  virtual void AppendText(std::string& out) const = 0;

 protected:
  void AppendHeader(std::string& out) const {
    out += "# HELP ";
    out += descriptor_.name;
    out += ' ';
    AppendEscapedHelp(out, descriptor_.help);
    out += "\n# TYPE ";
    out += descriptor_.name;
    out += ' ';
    out += type_name();
    out += '\n';
  }

 private:
  MetricDescriptor descriptor_;
};

template <typename Handle>
class MetricFamily final : public MetricFamilyBase {
 public:
  using Cell = typename Handle::Cell;
  using Shape = typename Cell::Shape;

  // The registry validates the descriptor and shape before constructing a family.
  MetricFamily(MetricDescriptor descriptor, Shape shape)
      : MetricFamilyBase(std::move(descriptor)), shape_(std::move(shape)) {}

  // Returns the child for these label values, in the order of the family's label names,
  // creating it on first use. Fails on a wrong number of values, a value that is not UTF-8 or
  // longer than kMaxLabelValueBytes, or when the family already has max_children children.
  [[nodiscard]] Result<Handle> WithLabels(std::initializer_list<std::string_view> values) {
    return WithLabels(std::span<const std::string_view>(values.begin(), values.size()));
  }
  [[nodiscard]] Result<Handle> WithLabels(std::span<const std::string_view> values) {
    const std::vector<std::string>& names = descriptor().label_names;
    if (values.size() != names.size()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("metric {} has {} label names but got {} values",
                                   descriptor().name, names.size(), values.size()));
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i].size() > kMaxLabelValueBytes || !IsValidUtf8(values[i])) {
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("metric {} label {}: value must be UTF-8 of at most {} bytes",
                                     descriptor().name, names[i], kMaxLabelValueBytes));
      }
    }
    std::vector<std::string> key(values.begin(), values.end());
    const std::lock_guard lock(mutex_);
    if (auto found = children_.find(key); found != children_.end()) {
      return Handle(&found->second->cell);
    }
    if (children_.size() >= descriptor().max_children) {
      return MakeError(ErrorCode::kResourceExhausted,
                       fmt::format("metric {} already has {} label combinations, its limit",
                                   descriptor().name, descriptor().max_children));
    }
    std::string rendered;
    for (std::size_t i = 0; i < key.size(); ++i) {
      if (i > 0) rendered += ',';
      rendered += names[i];
      rendered += "=\"";
      AppendEscapedLabelValue(rendered, key[i]);
      rendered += '"';
    }
    auto child = std::make_unique<Child>(shape_, std::move(rendered));
    Cell* cell = &child->cell;
    children_.emplace(std::move(key), std::move(child));
    return Handle(cell);
  }

  // Forgets the child for these label values, if there is one, so it is no longer exposed.
  // Every handle taken to it is dangling afterwards: only for families whose users keep none.
  // Returns whether a child was removed.
  bool Remove(std::initializer_list<std::string_view> values) {
    const std::vector<std::string> key(values.begin(), values.end());
    const std::lock_guard lock(mutex_);
    return children_.erase(key) > 0;
  }

  [[nodiscard]] std::size_t child_count() const {
    const std::lock_guard lock(mutex_);
    return children_.size();
  }

  [[nodiscard]] std::string_view type_name() const override { return Cell::kTypeName; }

  void AppendText(std::string& out) const override {
    AppendHeader(out);
    const std::lock_guard lock(mutex_);
    for (const auto& [values, child] : children_) {
      child->cell.AppendSamples(out, descriptor().name, child->rendered_labels);
    }
  }

 private:
  struct Child {
    Child(const Shape& shape, std::string labels)
        : cell(shape), rendered_labels(std::move(labels)) {}
    Cell cell;
    std::string rendered_labels;  // escaped once, at creation, not on every scrape
  };

  const Shape shape_;  // cells keep references into it
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, std::unique_ptr<Child>> children_;
};

}  // namespace modelplane::core
