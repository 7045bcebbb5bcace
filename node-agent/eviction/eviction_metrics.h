// Eviction's Prometheus metrics: bytes and revisions evicted by reason, bytes protected by
// class, the watermarks, free and reclaimable bytes, stagings refused, blobs withheld from
// peers. Registered once per process.
//
//   modelplane_eviction_evicted_bytes_total{reason}      counter
//   watermark|admission|revoked|unreferenced modelplane_eviction_evicted_revisions_total{reason}
//   counter modelplane_eviction_protected_bytes{class}           gauge
//   inUse|reserved|pinned|wanted|lastZoneCopy modelplane_eviction_watermark_bytes{level} gauge
//   high|low|limit modelplane_eviction_free_bytes                       gauge    below the
//   admission limit modelplane_eviction_reclaimable_bytes                gauge
//   modelplane_eviction_refused_stagings_total           counter  InsufficientCapacity
//   modelplane_eviction_withheld_blobs                   gauge    revoked blobs peers get 404 for
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

#include "core/error/error.h"
#include "core/metrics/metrics_registry.h"
#include "node-agent/eviction/protection.h"
#include "node-agent/eviction/watermarks.h"

namespace modelplane::agent {

class EvictionMetrics {
 public:
  [[nodiscard]] static core::Result<EvictionMetrics> Register(core::MetricsRegistry& registry);

  void Evicted(std::string_view reason, std::uint64_t bytes) const;
  void Refused() const { refused_->Increment(); }
  void Protected(const std::map<Protection, std::uint64_t>& bytes_by_class) const;
  void Space(const WatermarkBytes& watermarks, std::uint64_t free_bytes,
             std::uint64_t reclaimable_bytes) const;
  void Withheld(std::size_t blobs) const { withheld_->Set(static_cast<double>(blobs)); }

 private:
  EvictionMetrics() = default;
  core::CounterFamily* evicted_bytes_ = nullptr;
  core::CounterFamily* evicted_revisions_ = nullptr;
  core::GaugeFamily* protected_ = nullptr;
  core::GaugeFamily* watermarks_ = nullptr;
  std::optional<core::Gauge> free_;
  std::optional<core::Gauge> reclaimable_;
  std::optional<core::Counter> refused_;
  std::optional<core::Gauge> withheld_;
};

}  // namespace modelplane::agent
