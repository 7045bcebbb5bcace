// The loader's figures as Prometheus metrics: every load recorded into one set of families
// (bytes read and needed, request sizes, queue depth, host-memory high-water marks, durations,
// loads and failures, per rank and device kind), exposed in the text format by core/metrics.
// The CLI writes the exposition to --metrics-file; the C ABI hands it to the Python package's
// prometheus_client collector. One class builds the families, so both carry the same metrics.
//
// Labels are bounded: rank, device kind ("cpu", "cuda", "none"), and for a few families a
// small fixed set (file read mode, host memory kind, error code, engine). No paths.
//
// Thread safety: RecordLoad, RecordFailure and ExposeText may be called from any number of
// threads at once (the registry's families serialise on their own mutexes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/error/error.h"
#include "core/metrics/metrics_registry.h"
#include "node-agent/loader/load_options.h"
#include "node-agent/loader/load_stats.h"

namespace modelplane::agent {

// Children per family. The files family has four per rank and device kind, so a process (or
// `stream --all-ranks`) records up to 1024 (rank, device kind) pairs; a load of one more fails
// to record with kResourceExhausted.
inline constexpr std::size_t kLoaderMetricsMaxChildren = 4096;

class LoaderMetrics {
 public:
  [[nodiscard]] static core::Result<std::unique_ptr<LoaderMetrics>> Create();

  LoaderMetrics(const LoaderMetrics&) = delete;
  LoaderMetrics& operator=(const LoaderMetrics&) = delete;

  // Adds one finished load: counters grow by its figures, gauges take its values (the last
  // load of that rank and device kind). Fails only when a label limit is reached; then no value
  // of this load is recorded.
  [[nodiscard]] core::Status RecordLoad(const LoadStats& stats);
  // Counts one failed load with the rank and device it was asked for and its error code.
  [[nodiscard]] core::Status RecordFailure(std::uint32_t rank, DeviceKind device,
                                           core::ErrorCode code);

  // Text exposition format 0.0.4 of every family.
  [[nodiscard]] std::string ExposeText() const { return registry_.ExposeText(); }

 private:
  LoaderMetrics() = default;
  [[nodiscard]] core::Status Register();

  core::MetricsRegistry registry_;
  core::CounterFamily* loads_ = nullptr;
  core::CounterFamily* failures_ = nullptr;
  core::CounterFamily* read_bytes_ = nullptr;
  core::CounterFamily* tensor_bytes_ = nullptr;
  core::CounterFamily* files_ = nullptr;
  core::CounterFamily* fallbacks_ = nullptr;
  core::HistogramFamily* request_sizes_ = nullptr;
  core::HistogramFamily* durations_ = nullptr;
  core::GaugeFamily* amplification_ = nullptr;
  core::GaugeFamily* queue_depth_ = nullptr;
  core::GaugeFamily* in_flight_max_ = nullptr;
  core::GaugeFamily* in_flight_mean_ = nullptr;
  core::GaugeFamily* host_memory_ = nullptr;
};

// "cpu", "cuda" or "none": the device label (the CUDA ordinal is left out to bound the labels).
[[nodiscard]] std::string_view DeviceKindName(DeviceKind kind);

}  // namespace modelplane::agent
