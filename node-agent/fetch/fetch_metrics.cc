#include "node-agent/fetch/fetch_metrics.h"

#include "core/metrics/histogram_buckets.h"

namespace modelplane::agent {
core::Result<FetchMetrics> FetchMetrics::Register(core::MetricsRegistry& registry) {
  FetchMetrics metrics;
  auto bytes = registry.AddCounter({.name = "modelplane_fetch_bytes_total",
                                    .help = "Bytes fetched into the cache, by tier and source.",
                                    .label_names = {"tier", "source"}});
  if (!bytes) return std::unexpected(bytes.error());
  metrics.bytes_ = *bytes;
  auto sizes = core::ExponentialBuckets(64 * 1024, 2, 12);  // 64 KiB .. 128 MiB
  if (!sizes) return std::unexpected(sizes.error());
  auto request_bytes =
      registry.AddHistogram({.name = "modelplane_fetch_request_bytes",
                             .help = "Size of each range request that completed, by tier.",
                             .label_names = {"tier"}},
                            *sizes);
  if (!request_bytes) return std::unexpected(request_bytes.error());
  metrics.request_bytes_ = *request_bytes;
  auto request_seconds =
      registry.AddHistogram({.name = "modelplane_fetch_request_duration_seconds",
                             .help = "Time each completed range request took, by tier.",
                             .label_names = {"tier"}},
                            core::DefaultSecondsBuckets());
  if (!request_seconds) return std::unexpected(request_seconds.error());
  metrics.request_seconds_ = *request_seconds;
  auto errors = registry.AddCounter({.name = "modelplane_fetch_errors_total",
                                     .help = "Failed range requests, by tier, source and kind.",
                                     .label_names = {"tier", "source", "kind"}});
  if (!errors) return std::unexpected(errors.error());
  metrics.errors_ = *errors;
  auto quarantines = registry.AddCounter(
      {.name = "modelplane_fetch_quarantines_total",
       .help = "Sources quarantined for serving bytes that failed verification.",
       .label_names = {"tier", "source"}});
  if (!quarantines) return std::unexpected(quarantines.error());
  metrics.quarantines_ = *quarantines;
  // A staging takes from a second (a peer next door, a small revision) to hours (hundreds of
  // GB from a throttled origin): 1 s to 9 h.
  auto ready_seconds = core::ExponentialBuckets(1, 2, 16);
  if (!ready_seconds) return std::unexpected(ready_seconds.error());
  auto bytes_to_ready = registry.AddHistogram(
      {.name = "modelplane_staging_bytes_to_ready_seconds",
       .help = "Time from a staging being queued to its revision published Ready, by the tier "
               "that served most of its bytes (local when it was all in the cache already).",
       .label_names = {"tier"}},
      *ready_seconds);
  if (!bytes_to_ready) return std::unexpected(bytes_to_ready.error());
  metrics.bytes_to_ready_ = *bytes_to_ready;

  auto gauge = [&](std::string name, std::string help) -> core::Result<core::Gauge> {
    auto family = registry.AddGauge({.name = std::move(name), .help = std::move(help)});
    if (!family) return std::unexpected(family.error());
    return (*family)->WithLabels({});
  };
  auto counter = [&](std::string name, std::string help) -> core::Result<core::Counter> {
    auto family = registry.AddCounter({.name = std::move(name), .help = std::move(help)});
    if (!family) return std::unexpected(family.error());
    return (*family)->WithLabels({});
  };
  auto in_flight = gauge("modelplane_fetch_requests_in_flight", "Range requests in flight.");
  auto hits = counter("modelplane_cache_hits_total", "Blobs a fetch found already in the cache.");
  auto misses = counter("modelplane_cache_misses_total", "Blobs a fetch had to stage.");
  auto resumed = counter("modelplane_fetch_resumed_bytes_total",
                         "Bytes of interrupted stagings reused after a restart.");
  auto resumed_discarded =
      counter("modelplane_fetch_resumed_bytes_discarded_total",
              "Resumed bytes thrown away because their file failed verification: the file was "
              "fetched again from the start before any source was blamed.");
  auto throughput =
      gauge("modelplane_fetch_last_throughput_bytes_per_second",
            "Bytes per second of the last completed fetch, from queued to published.");
  auto capacity = gauge("modelplane_cache_capacity_bytes", "Bytes the cache may hold.");
  auto used = gauge("modelplane_cache_used_bytes", "Bytes of published blobs in the cache.");
  auto reserved =
      gauge("modelplane_cache_reserved_bytes", "Bytes reserved by stagings in progress.");
  for (const auto* failed : {&in_flight, &throughput, &capacity, &used, &reserved}) {
    if (!*failed) return std::unexpected(failed->error());
  }
  for (const auto* failed : {&hits, &misses, &resumed, &resumed_discarded}) {
    if (!*failed) return std::unexpected(failed->error());
  }
  metrics.in_flight_ = *in_flight;
  metrics.hits_ = *hits;
  metrics.misses_ = *misses;
  metrics.resumed_ = *resumed;
  metrics.resumed_discarded_ = *resumed_discarded;
  metrics.throughput_ = *throughput;
  metrics.capacity_ = *capacity;
  metrics.used_ = *used;
  metrics.reserved_ = *reserved;
  return metrics;
}

void FetchMetrics::RangeDone(std::string_view tier, std::string_view source, std::uint64_t bytes,
                             double seconds) const {
  if (auto counter = bytes_->WithLabels({tier, source})) {
    counter->Increment(static_cast<double>(bytes));
  }
  if (auto histogram = request_bytes_->WithLabels({tier})) {
    histogram->Observe(static_cast<double>(bytes));
  }
  if (auto histogram = request_seconds_->WithLabels({tier})) histogram->Observe(seconds);
}

void FetchMetrics::RangeFailed(std::string_view tier, std::string_view source,
                               core::ErrorCode code) const {
  if (auto counter = errors_->WithLabels({tier, source, core::ErrorCodeName(code)})) {
    counter->Increment();
  }
}

void FetchMetrics::Quarantined(std::string_view tier, std::string_view source) const {
  if (auto counter = quarantines_->WithLabels({tier, source})) counter->Increment();
}

void FetchMetrics::StagingReady(std::string_view tier, double seconds) const {
  if (auto histogram = bytes_to_ready_->WithLabels({tier})) histogram->Observe(seconds);
}

void FetchMetrics::Store(const SpaceUsage& usage) const {
  capacity_->Set(static_cast<double>(usage.capacity_bytes));
  used_->Set(static_cast<double>(usage.used_bytes));
  reserved_->Set(static_cast<double>(usage.reserved_bytes));
}

}  // namespace modelplane::agent
