// The data plane's Prometheus metrics: bytes by tier and source, request sizes, requests in
// flight, errors by kind, quarantines, cache hits and misses, resumed bytes (reused, and
// discarded after a mismatch), throughput, bytes-to-ready of each staging by the tier that
// served it, and the store's capacity, used and reserved bytes.
// Registered once per process; the engine and the agent update them.
//
// Thread safety: every method may be called from any thread (handles are atomics).
#pragma once

#include <optional>
#include <string_view>

#include "core/error/error.h"
#include "core/metrics/metrics_registry.h"
#include "node-agent/store/space_ledger.h"

namespace modelplane::agent {

class FetchMetrics {
 public:
  [[nodiscard]] static core::Result<FetchMetrics> Register(core::MetricsRegistry& registry);

  void RangeDone(std::string_view tier, std::string_view source, std::uint64_t bytes,
                 double seconds) const;
  void RangeFailed(std::string_view tier, std::string_view source, core::ErrorCode code) const;
  void InFlight(double delta) const { in_flight_->Increment(delta); }
  void Quarantined(std::string_view tier, std::string_view source) const;
  void BlobHit() const { hits_->Increment(); }
  void BlobMiss() const { misses_->Increment(); }
  void ResumedBytes(std::uint64_t bytes) const { resumed_->Increment(static_cast<double>(bytes)); }
  void ResumedBytesDiscarded(std::uint64_t bytes) const {
    resumed_discarded_->Increment(static_cast<double>(bytes));
  }
  void FetchFinished(double bytes_per_second) const { throughput_->Set(bytes_per_second); }
  // A staging became Ready `seconds` after it was queued (the revision status' bytes-to-ready,
  // published - queued); `tier`: the one that served most of its bytes, or "local".
  void StagingReady(std::string_view tier, double seconds) const;
  void Store(const SpaceUsage& usage) const;

 private:
  FetchMetrics() = default;
  core::CounterFamily* bytes_ = nullptr;
  core::HistogramFamily* request_bytes_ = nullptr;
  core::HistogramFamily* request_seconds_ = nullptr;
  core::CounterFamily* errors_ = nullptr;
  core::CounterFamily* quarantines_ = nullptr;
  core::HistogramFamily* bytes_to_ready_ = nullptr;
  // Set once by Register; optional only because handles have no empty state.
  std::optional<core::Gauge> in_flight_;
  std::optional<core::Counter> hits_;
  std::optional<core::Counter> misses_;
  std::optional<core::Counter> resumed_;
  std::optional<core::Counter> resumed_discarded_;
  std::optional<core::Gauge> throughput_;
  std::optional<core::Gauge> capacity_;
  std::optional<core::Gauge> used_;
  std::optional<core::Gauge> reserved_;
};

}  // namespace modelplane::agent
