#include "operator/admission/admission_metrics.h"

namespace modelplane::controller {

core::Result<AdmissionMetrics> AdmissionMetrics::Register(core::MetricsRegistry& registry) {
  AdmissionMetrics metrics;
  const auto gauge = [&](const char* name, const char* help,
                         core::GaugeFamily*& out) -> core::Status {
    auto family = registry.AddGauge({.name = name, .help = help, .label_names = {"source"}});
    if (!family) return std::unexpected(family.error());
    out = *family;
    return core::Ok();
  };
  const auto counter = [&](const char* name, const char* help,
                           core::CounterFamily*& out) -> core::Status {
    auto family = registry.AddCounter({.name = name, .help = help, .label_names = {"source"}});
    if (!family) return std::unexpected(family.error());
    out = *family;
    return core::Ok();
  };
  for (auto status :
       {gauge("modelplane_admission_budget_streams",
              "Concurrent range requests the fleet may make to a source (the learned budget).",
              metrics.budget_streams_),
        gauge("modelplane_admission_observed_bytes_per_second",
              "Bytes per second the fleet read from a source over the last interval.",
              metrics.observed_),
        gauge("modelplane_admission_granted_streams",
              "Streams of a source granted to nodes in the last pass.", metrics.granted_),
        gauge("modelplane_admission_waiting_stagings",
              "Stagings that need a source and hold no stream of it (followers included).",
              metrics.waiting_),
        counter("modelplane_admission_throttled_requests_total",
                "Throttled answers (429, 503 SlowDown) the fleet reported for a source.",
                metrics.throttled_),
        counter("modelplane_admission_budget_cuts_total",
                "Times a source's budget was cut on throttling, errors, timeouts or latency.",
                metrics.cuts_)}) {
    if (!status) return std::unexpected(status.error());
  }
  return metrics;
}

void AdmissionMetrics::Record(std::string_view source, const SourceMetricsSample& sample) const {
  if (budget_streams_ == nullptr) return;
  if (auto handle = budget_streams_->WithLabels({source})) handle->Set(sample.budget_streams);
  if (auto handle = observed_->WithLabels({source})) handle->Set(sample.observed_bytes_per_second);
  if (auto handle = granted_->WithLabels({source})) handle->Set(sample.granted_streams);
  if (auto handle = waiting_->WithLabels({source})) handle->Set(sample.waiting_stagings);
  if (auto handle = throttled_->WithLabels({source})) {
    handle->Increment(static_cast<double>(sample.throttled_requests));
  }
  if (sample.cut) {
    if (auto handle = cuts_->WithLabels({source})) handle->Increment();
  }
}

}  // namespace modelplane::controller
