#include "node-agent/loader/stream_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <unistd.h>

#include "node-agent/loader/loader_metrics.h"
#include "node-agent/loader/safetensors_loader.h"
#include "node-agent/store/durable_file.h"

namespace modelplane::agent {
namespace {

struct StreamFlags {
  std::vector<std::string> paths;
  std::string device = "cpu";
  std::uint32_t rank = 0;
  std::uint32_t world_size = 1;
  bool all_ranks = false;
  std::vector<std::string> rules;
  std::uint32_t request_kib = kDefaultRequestBytes / 1024;
  std::uint32_t queue_depth = kDefaultQueueDepth;
  std::uint64_t ring_mib = 0;
  std::string engine = "auto";
  std::string io = "auto";
  bool no_gds = false;
  std::uint32_t cuda_streams = 2;
  bool json = false;
  std::string metrics_file;  // empty: none
};

std::uint64_t PeakRssBytes() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

// Replaces the metrics file with the exposition of every load so far (write-then-rename, as
// node-exporter's textfile collector expects: a scrape never sees half a file).
bool WriteMetricsFile(const std::string& path, const LoaderMetrics& metrics) {
  if (auto written = WriteFileDurably(path, metrics.ExposeText()); !written) {
    std::fprintf(stderr, "stream: metrics file: %s\n", written.error().ToString().c_str());
    return false;
  }
  return true;
}

void WarnIfUnrecorded(const core::Status& status) {
  if (!status) {
    std::fprintf(stderr, "stream: metrics not recorded: %s\n", status.error().ToString().c_str());
  }
}

int Load(const StreamFlags& flags, LoaderMetrics* metrics) {
  LoadOptions options;
  auto device = ParseLoadDevice(flags.device);
  auto io = ParseIoMode(flags.io);
  std::string rule_text;
  for (const std::string& rule : flags.rules) rule_text += rule + ";";
  auto rules = ParseShardRules(rule_text);
  for (const core::Error* error : {device ? nullptr : &device.error(), io ? nullptr : &io.error(),
                                   rules ? nullptr : &rules.error()}) {
    if (error != nullptr) {
      std::fprintf(stderr, "stream: %s\n", error->ToString().c_str());
      return 2;
    }
  }
  options.device = *device;
  options.io_mode = *io;
  options.rules = std::move(*rules);
  options.world_size = flags.world_size;
  options.request_bytes = flags.request_kib * 1024;
  options.queue_depth = flags.queue_depth;
  options.ring_bytes = flags.ring_mib << 20;
  options.engine = flags.engine == "io_uring" ? EngineKind::kIoUring
                   : flags.engine == "pread"  ? EngineKind::kThreadPool
                                              : EngineKind::kAuto;
  options.gds = !flags.no_gds;
  options.cuda_streams = flags.cuda_streams;

  std::vector<std::string> files;
  for (const std::string& path : flags.paths) {
    auto resolved = ResolveCheckpointFiles(path);
    if (!resolved) {
      std::fprintf(stderr, "stream: %s\n", resolved.error().ToString().c_str());
      if (metrics != nullptr) {
        WarnIfUnrecorded(
            metrics->RecordFailure(flags.rank, options.device.kind, resolved.error().code()));
      }
      return 2;
    }
    files.insert(files.end(), resolved->begin(), resolved->end());
  }
  const bool table = !flags.json && ::isatty(STDOUT_FILENO) != 0;
  std::uint32_t first = flags.rank;
  std::uint32_t last = flags.rank;
  if (flags.all_ranks) {
    first = 0;
    last = flags.world_size - 1;
  }
  for (std::uint32_t rank = first; rank <= last; ++rank) {
    options.rank = rank;
    auto result = LoadSafetensors(files, options);
    if (!result) {
      std::fprintf(stderr, "stream: rank %u: %s\n", rank, result.error().ToString().c_str());
      if (metrics != nullptr) {
        WarnIfUnrecorded(metrics->RecordFailure(rank, options.device.kind, result.error().code()));
      }
      return 1;
    }
    const LoadStats& stats = result->stats();
    if (metrics != nullptr) WarnIfUnrecorded(metrics->RecordLoad(stats));
    if (table) {
      std::fputs(fmt::format("rank {} of {}: {} tensors, {:.1f} MiB/s\n{}  {:<22} {:.1f} MiB\n",
                             rank, flags.world_size, stats.tensors,
                             stats.BytesPerSecond() / (1 << 20), stats.ToTable(),
                             "process peak RSS", static_cast<double>(PeakRssBytes()) / (1 << 20))
                     .c_str(),
                 stdout);
    } else {
      nlohmann::json line = nlohmann::json::parse(stats.ToJson());
      line["peak_rss_bytes"] = PeakRssBytes();
      std::fputs((line.dump() + "\n").c_str(), stdout);
    }
  }
  return 0;
}

int Run(const StreamFlags& flags) {
  if (flags.metrics_file.empty()) return Load(flags, nullptr);
  auto metrics = LoaderMetrics::Create();
  if (!metrics) {
    std::fprintf(stderr, "stream: %s\n", metrics.error().ToString().c_str());
    return 1;
  }
  // Written whatever happened, so a failure shows in load_failures_total.
  const int code = Load(flags, metrics->get());
  return WriteMetricsFile(flags.metrics_file, **metrics) ? code : 1;
}

}  // namespace

Subcommand AddStreamCommand(CLI::App& parent) {
  auto flags = std::make_shared<StreamFlags>();
  CLI::App* app = parent.add_subcommand(
      "stream", "Load a safetensors checkpoint with the streaming loader and print throughput");
  app->add_option("paths", flags->paths, "files, folders or model.safetensors.index.json")
      ->required();
  app->add_option("--device", flags->device, "cpu, cuda, cuda:N or none (read and drop)");
  app->add_option("--rank", flags->rank, "tensor-parallel rank");
  app->add_option("--world-size", flags->world_size, "tensor-parallel degree")
      ->check(CLI::Range(1u, 65536u));
  app->add_flag("--all-ranks", flags->all_ranks, "load every rank in turn (bytes read per rank)");
  app->add_option("--rule", flags->rules, "PATTERN=split:DIM | PATTERN=rank:R | PATTERN=replicate");
  app->add_option("--request-kib", flags->request_kib, "read request size in KiB")
      ->check(CLI::Range(4u, 1048576u));
  app->add_option("--queue-depth", flags->queue_depth, "reads in flight")
      ->check(CLI::Range(1u, 1024u));
  app->add_option("--ring-mib", flags->ring_mib, "staging ring size (0: queue depth x request)");
  app->add_option("--engine", flags->engine, "auto, io_uring or pread")
      ->check(CLI::IsMember({"auto", "io_uring", "pread"}));
  app->add_option("--io", flags->io, "auto, direct or buffered")
      ->check(CLI::IsMember({"auto", "direct", "buffered"}));
  app->add_flag("--no-gds", flags->no_gds, "never use GPUDirect Storage");
  app->add_option("--cuda-streams", flags->cuda_streams, "copy streams")
      ->check(CLI::Range(1u, 64u));
  app->add_flag("--json", flags->json, "one JSON object per rank");
  app->add_option("--metrics-file", flags->metrics_file,
                  "write the loads' figures here in the Prometheus text format (replaced "
                  "atomically, for node-exporter's textfile collector)");
  return Subcommand{.app = app, .run = [flags] { return Run(*flags); }};
}

}  // namespace modelplane::agent
