#include "node-agent/loader/loader_metrics.h"

#include <array>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace modelplane::agent {
namespace {

using core::MetricDescriptor;

// The request-size buckets of LoadStats: bucket i holds requests of at most 4 KiB << i, the
// last one everything larger, which is the histogram's +Inf bucket.
std::vector<double> RequestSizeBounds() {
  std::vector<double> bounds;
  for (std::size_t i = 0; i + 1 < kRequestSizeBuckets; ++i) {
    bounds.push_back(static_cast<double>(std::uint64_t{4096} << i));
  }
  return bounds;
}

// Whole loads: from a small checkpoint in the page cache to a large model over a slow network
// filesystem.
std::vector<double> DurationBounds() {
  return {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 3600};
}

MetricDescriptor Describe(std::string name, std::string help,
                          std::vector<std::string> extra_labels = {}) {
  std::vector<std::string> labels = {"rank", "device"};
  labels.insert(labels.end(), extra_labels.begin(), extra_labels.end());
  return {.name = std::move(name),
          .help = std::move(help),
          .label_names = std::move(labels),
          .max_children = kLoaderMetricsMaxChildren};
}

// Adds `count` observations whose values sum to `sum` and all lie in one LoadStats bucket:
// integer values differing by at most one, so each lands in that bucket and the histogram's
// sum is exact (integers below 2^53 add exactly in a double).
void ObserveBucket(const core::Histogram& histogram, std::uint64_t count, std::uint64_t sum) {
  if (count == 0) return;
  const std::uint64_t low = sum / count;
  const std::uint64_t high_count = sum % count;
  for (std::uint64_t i = 0; i < count - high_count; ++i) {
    histogram.Observe(static_cast<double>(low));
  }
  for (std::uint64_t i = 0; i < high_count; ++i) histogram.Observe(static_cast<double>(low + 1));
}

}  // namespace

std::string_view DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu: return "cpu";
    case DeviceKind::kCuda: return "cuda";
    case DeviceKind::kNone: return "none";
  }
  return "unknown";
}

core::Result<std::unique_ptr<LoaderMetrics>> LoaderMetrics::Create() {
  std::unique_ptr<LoaderMetrics> metrics(new LoaderMetrics());
  if (auto status = metrics->Register(); !status) return std::unexpected(status.error());
  return metrics;
}

core::Status LoaderMetrics::Register() {
  auto counter = [this](core::CounterFamily*& family, MetricDescriptor descriptor) {
    auto added = registry_.AddCounter(std::move(descriptor));
    if (added) family = *added;
    return added.has_value() ? core::Ok() : core::Status(std::unexpected(added.error()));
  };
  auto gauge = [this](core::GaugeFamily*& family, MetricDescriptor descriptor) {
    auto added = registry_.AddGauge(std::move(descriptor));
    if (added) family = *added;
    return added.has_value() ? core::Ok() : core::Status(std::unexpected(added.error()));
  };
  auto histogram = [this](core::HistogramFamily*& family, MetricDescriptor descriptor,
                          std::vector<double> bounds) {
    auto added = registry_.AddHistogram(std::move(descriptor), std::move(bounds));
    if (added) family = *added;
    return added.has_value() ? core::Ok() : core::Status(std::unexpected(added.error()));
  };
  const std::array<core::Status, 13> statuses = {
      counter(loads_, Describe("modelplane_loader_loads_total",
                               "Checkpoint loads that completed, by the read engine they used.",
                               {"engine"})),
      counter(failures_, Describe("modelplane_loader_load_failures_total",
                                  "Checkpoint loads that failed, by error code.", {"code"})),
      counter(read_bytes_,
              Describe("modelplane_loader_read_bytes_total",
                       "Bytes the storage delivered for tensors (alignment and coalescing gaps "
                       "included; headers not).")),
      counter(tensor_bytes_,
              Describe("modelplane_loader_tensor_bytes_total",
                       "Bytes of the rank's tensors, what the loads needed; read amplification "
                       "is read_bytes_total / tensor_bytes_total.")),
      counter(files_, Describe("modelplane_loader_files_total",
                               "Checkpoint files read, by how: direct (O_DIRECT), buffered (page "
                               "cache), mapped (buffered, views of a file mapping) or gds.",
                               {"mode"})),
      counter(fallbacks_, Describe("modelplane_loader_fallbacks_total",
                                   "Fallbacks taken (io_uring unavailable, O_DIRECT refused, GDS "
                                   "registration failed); the load's stats say which.")),
      histogram(request_sizes_,
                Describe("modelplane_loader_read_request_size_bytes",
                         "Sizes of the read requests submitted to storage (a resubmitted short "
                         "read counts again)."),
                RequestSizeBounds()),
      histogram(durations_,
                Describe("modelplane_loader_load_duration_seconds",
                         "Wall time of completed loads, from opening the files to the verified "
                         "result."),
                DurationBounds()),
      gauge(amplification_, Describe("modelplane_loader_read_amplification_ratio",
                                     "Bytes read over bytes needed in the last load (1 = no "
                                     "byte read that the rank does not use).")),
      gauge(queue_depth_, Describe("modelplane_loader_queue_depth_limit",
                                   "Reads allowed in flight (queue_depth) in the last load.")),
      gauge(in_flight_max_, Describe("modelplane_loader_reads_in_flight_max",
                                     "Most reads outstanding at once in the last load.")),
      gauge(in_flight_mean_, Describe("modelplane_loader_reads_in_flight_mean",
                                      "Reads outstanding, averaged over submissions, in the "
                                      "last load.")),
      gauge(host_memory_,
            Describe("modelplane_loader_host_memory_high_water_bytes",
                     "Host memory high-water mark of the last load: pinned (ring registered for "
                     "CUDA copies), staging (unpinned ring and headers) or output (tensors "
                     "kept in host memory).",
                     {"kind"})),
  };
  for (const core::Status& status : statuses) {
    if (!status) return status;
  }
  return core::Ok();
}

core::Status LoaderMetrics::RecordLoad(const LoadStats& stats) {
  auto device = ParseLoadDevice(stats.device);
  const std::string_view device_kind =
      device ? DeviceKindName(device->kind) : std::string_view("unknown");
  const std::string rank = fmt::format("{}", stats.rank);
  const std::string_view base[] = {rank, device_kind};
  // Every child first, those of the families with several children per rank and device
  // before the others: they reach the limit first, and then no child of this load is made.
  constexpr std::array<std::string_view, 4> kModes = {"direct", "buffered", "mapped", "gds"};
  const std::array<std::uint32_t, 4> mode_counts = {stats.files_direct, stats.files_buffered,
                                                    stats.files_mapped, stats.files_gds};
  std::vector<core::Counter> files;
  for (const std::string_view mode : kModes) {
    auto child = files_->WithLabels({rank, device_kind, mode});
    if (!child) return std::unexpected(child.error());
    files.push_back(*child);
  }
  constexpr std::array<std::string_view, 3> kMemoryKinds = {"pinned", "staging", "output"};
  const std::array<std::uint64_t, 3> memory = {stats.host_pinned_bytes, stats.host_staging_bytes,
                                               stats.host_output_bytes};
  std::vector<core::Gauge> host_memory;
  for (const std::string_view kind : kMemoryKinds) {
    auto child = host_memory_->WithLabels({rank, device_kind, kind});
    if (!child) return std::unexpected(child.error());
    host_memory.push_back(*child);
  }
  const std::string_view engine = stats.engine.empty() ? std::string_view("none") : stats.engine;
  auto loads = loads_->WithLabels({rank, device_kind, engine});
  auto read_bytes = read_bytes_->WithLabels(base);
  auto tensor_bytes = tensor_bytes_->WithLabels(base);
  auto fallbacks = fallbacks_->WithLabels(base);
  auto request_sizes = request_sizes_->WithLabels(base);
  auto duration = durations_->WithLabels(base);
  auto amplification = amplification_->WithLabels(base);
  auto queue_depth = queue_depth_->WithLabels(base);
  auto in_flight_max = in_flight_max_->WithLabels(base);
  auto in_flight_mean = in_flight_mean_->WithLabels(base);
  for (const core::Error* error :
       {loads ? nullptr : &loads.error(), read_bytes ? nullptr : &read_bytes.error(),
        tensor_bytes ? nullptr : &tensor_bytes.error(), fallbacks ? nullptr : &fallbacks.error(),
        request_sizes ? nullptr : &request_sizes.error(), duration ? nullptr : &duration.error(),
        amplification ? nullptr : &amplification.error(),
        queue_depth ? nullptr : &queue_depth.error(),
        in_flight_max ? nullptr : &in_flight_max.error(),
        in_flight_mean ? nullptr : &in_flight_mean.error()}) {
    if (error != nullptr) return std::unexpected(*error);
  }

  loads->Increment();
  read_bytes->Increment(static_cast<double>(stats.bytes_read));
  tensor_bytes->Increment(static_cast<double>(stats.bytes_needed));
  fallbacks->Increment(static_cast<double>(stats.fallbacks.size()));
  for (std::size_t i = 0; i < kModes.size(); ++i) {
    files[i].Increment(static_cast<double>(mode_counts[i]));
  }
  for (std::size_t i = 0; i < kRequestSizeBuckets; ++i) {
    ObserveBucket(*request_sizes, stats.request_size_histogram[i], stats.request_size_bytes[i]);
  }
  duration->Observe(stats.seconds);
  amplification->Set(stats.ReadAmplification());
  queue_depth->Set(stats.queue_depth);
  in_flight_max->Set(stats.max_in_flight);
  in_flight_mean->Set(stats.mean_in_flight);
  for (std::size_t i = 0; i < kMemoryKinds.size(); ++i) {
    host_memory[i].Set(static_cast<double>(memory[i]));
  }
  return core::Ok();
}

core::Status LoaderMetrics::RecordFailure(std::uint32_t rank, DeviceKind device,
                                          core::ErrorCode code) {
  const std::string rank_label = fmt::format("{}", rank);
  auto failures =
      failures_->WithLabels({rank_label, DeviceKindName(device), core::ErrorCodeName(code)});
  if (!failures) return std::unexpected(failures.error());
  failures->Increment();
  return core::Ok();
}

}  // namespace modelplane::agent
