// The admission controller's Prometheus metrics, per source identity: the learned budget, what
// the fleet read in the last interval, what was granted, how many stagings wait, throttled
// answers and the budget's cuts. Registered once per process (ControllerMetrics owns them) and
// shared by every admission controller a leadership term starts.
// Thread safety: handles update atomically.
#pragma once

#include <string_view>

#include "core/metrics/metrics_registry.h"

namespace modelplane::controller {

struct SourceMetricsSample {
  int budget_streams = 0;
  double observed_bytes_per_second = 0;
  int granted_streams = 0;
  int waiting_stagings = 0;
  std::int64_t throttled_requests = 0;
  bool cut = false;
};

class AdmissionMetrics {
 public:
  [[nodiscard]] static core::Result<AdmissionMetrics> Register(core::MetricsRegistry& registry);

  void Record(std::string_view source, const SourceMetricsSample& sample) const;

 private:
  AdmissionMetrics() = default;
  core::GaugeFamily* budget_streams_ = nullptr;
  core::GaugeFamily* observed_ = nullptr;
  core::GaugeFamily* granted_ = nullptr;
  core::GaugeFamily* waiting_ = nullptr;
  core::CounterFamily* throttled_ = nullptr;
  core::CounterFamily* cuts_ = nullptr;
};

}  // namespace modelplane::controller
