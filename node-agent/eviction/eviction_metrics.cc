#include "node-agent/eviction/eviction_metrics.h"

namespace modelplane::agent {

core::Result<EvictionMetrics> EvictionMetrics::Register(core::MetricsRegistry& registry) {
  EvictionMetrics metrics;
  auto evicted_bytes = registry.AddCounter({.name = "modelplane_eviction_evicted_bytes_total",
                                            .help = "Bytes of blobs eviction removed, by reason.",
                                            .label_names = {"reason"}});
  if (!evicted_bytes) return std::unexpected(evicted_bytes.error());
  metrics.evicted_bytes_ = *evicted_bytes;
  auto evicted_revisions =
      registry.AddCounter({.name = "modelplane_eviction_evicted_revisions_total",
                           .help = "Revisions eviction removed from the cache, by reason.",
                           .label_names = {"reason"}});
  if (!evicted_revisions) return std::unexpected(evicted_revisions.error());
  metrics.evicted_revisions_ = *evicted_revisions;
  auto protected_bytes = registry.AddGauge(
      {.name = "modelplane_eviction_protected_bytes",
       .help = "Bytes of blobs revisions of each protection class reference (a blob counts in "
               "every class that references it).",
       .label_names = {"class"}});
  if (!protected_bytes) return std::unexpected(protected_bytes.error());
  metrics.protected_ = *protected_bytes;
  auto watermarks =
      registry.AddGauge({.name = "modelplane_eviction_watermark_bytes",
                         .help = "Eviction starts above high and stops at low; admission fills "
                                 "the cache up to limit.",
                         .label_names = {"level"}});
  if (!watermarks) return std::unexpected(watermarks.error());
  metrics.watermarks_ = *watermarks;

  auto gauge = [&](std::string name, std::string help) -> core::Result<core::Gauge> {
    auto family = registry.AddGauge({.name = std::move(name), .help = std::move(help)});
    if (!family) return std::unexpected(family.error());
    return (*family)->WithLabels({});
  };
  auto free = gauge("modelplane_eviction_free_bytes",
                    "Bytes a staging may still take below the admission limit.");
  if (!free) return std::unexpected(free.error());
  auto reclaimable = gauge("modelplane_eviction_reclaimable_bytes",
                           "Bytes eviction could free without touching a protected revision.");
  if (!reclaimable) return std::unexpected(reclaimable.error());
  auto withheld = gauge("modelplane_eviction_withheld_blobs",
                        "Blobs of revoked revisions the peer server answers 404 for.");
  if (!withheld) return std::unexpected(withheld.error());
  auto refused = registry.AddCounter(
      {.name = "modelplane_eviction_refused_stagings_total",
       .help = "Stagings refused because they could not fit without evicting protected content."});
  if (!refused) return std::unexpected(refused.error());
  auto refused_handle = (*refused)->WithLabels({});
  if (!refused_handle) return std::unexpected(refused_handle.error());
  metrics.free_ = *free;
  metrics.reclaimable_ = *reclaimable;
  metrics.withheld_ = *withheld;
  metrics.refused_ = *refused_handle;
  return metrics;
}

void EvictionMetrics::Evicted(std::string_view reason, std::uint64_t bytes) const {
  if (auto counter = evicted_bytes_->WithLabels({reason})) {
    counter->Increment(static_cast<double>(bytes));
  }
  if (auto counter = evicted_revisions_->WithLabels({reason})) counter->Increment();
}

void EvictionMetrics::Protected(const std::map<Protection, std::uint64_t>& bytes_by_class) const {
  for (Protection protection : kAllProtections) {
    const auto found = bytes_by_class.find(protection);
    if (auto gauge = protected_->WithLabels({ProtectionName(protection)})) {
      gauge->Set(found == bytes_by_class.end() ? 0 : static_cast<double>(found->second));
    }
  }
}

void EvictionMetrics::Space(const WatermarkBytes& watermarks, std::uint64_t free_bytes,
                            std::uint64_t reclaimable_bytes) const {
  for (const auto& [level, bytes] :
       {std::pair<std::string_view, std::uint64_t>{"high", watermarks.high},
        {"low", watermarks.low},
        {"limit", watermarks.limit}}) {
    if (auto gauge = watermarks_->WithLabels({level})) gauge->Set(static_cast<double>(bytes));
  }
  free_->Set(static_cast<double>(free_bytes));
  reclaimable_->Set(static_cast<double>(reclaimable_bytes));
}

}  // namespace modelplane::agent
