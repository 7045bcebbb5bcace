#include "node-agent/loader/loader_metrics.h"

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

// Reads an exposition back: every sample line as `name{labels}` -> value, and checks the
// format's structure on the way (each sample after its family's HELP and TYPE, no blank lines).
// The Python test parses the same text with prometheus_client's parser.
struct Exposition {
  std::map<std::string, double> samples;
  std::map<std::string, std::string> types;  // family name -> counter, gauge, histogram
};

Exposition Parse(const std::string& text) {
  Exposition out;
  std::istringstream lines(text);
  std::string line;
  std::set<std::string> helped;
  std::string family;
  while (std::getline(lines, line)) {
    EXPECT_FALSE(line.empty()) << "blank line in\n" << text;
    if (line.starts_with("# HELP ")) {
      family = line.substr(7, line.find(' ', 7) - 7);
      helped.insert(family);
      continue;
    }
    if (line.starts_with("# TYPE ")) {
      const std::size_t name_end = line.find(' ', 7);
      EXPECT_EQ(line.substr(7, name_end - 7), family) << line;
      out.types[family] = line.substr(name_end + 1);
      continue;
    }
    const std::size_t space = line.rfind(' ');
    const std::string key = line.substr(0, space);
    EXPECT_TRUE(key.starts_with(family)) << line << " outside its family " << family;
    EXPECT_TRUE(out.samples.emplace(key, std::strtod(line.c_str() + space + 1, nullptr)).second)
        << "duplicate sample " << key;
  }
  EXPECT_EQ(helped.size(), out.types.size());
  return out;
}

LoadStats SampleStats() {
  LoadStats stats;
  stats.engine = "io_uring";
  stats.device = "cuda:1";
  stats.rank = 3;
  stats.world_size = 4;
  stats.files = 3;
  stats.files_direct = 1;
  stats.files_buffered = 1;
  stats.files_gds = 1;
  stats.bytes_needed = 100'000;
  stats.bytes_read = 125'000;
  // 3 requests of 4 KiB, 2 of 6000 and 7000 bytes, 1 of 16 MiB, 1 larger than 64 MiB.
  for (int i = 0; i < 3; ++i) stats.CountRequest(4096);
  stats.CountRequest(6000);
  stats.CountRequest(7000);
  stats.CountRequest(16u << 20);
  stats.CountRequest(std::uint64_t{100} << 20);
  stats.queue_depth = 8;
  stats.max_in_flight = 6;
  stats.mean_in_flight = 4.5;
  stats.host_pinned_bytes = 1 << 20;
  stats.host_staging_bytes = 4096;
  stats.host_output_bytes = 0;
  stats.seconds = 1.5;
  stats.fallbacks = {"x.safetensors: O_DIRECT refused", "gds: nvidia-fs absent"};
  return stats;
}

TEST(LoaderMetricsTest, ExposesOneLoadsFigures) {
  auto metrics = LoaderMetrics::Create();
  ASSERT_TRUE(metrics) << metrics.error().ToString();
  ASSERT_TRUE((*metrics)->RecordLoad(SampleStats()));
  const Exposition exposition = Parse((*metrics)->ExposeText());
  const auto& s = exposition.samples;
  const std::string labels = R"(rank="3",device="cuda")";
  auto at = [&s](const std::string& key) {
    const auto found = s.find(key);
    EXPECT_NE(found, s.end()) << key;
    return found == s.end() ? -1.0 : found->second;
  };
  EXPECT_EQ(at(R"(modelplane_loader_loads_total{rank="3",device="cuda",engine="io_uring"})"), 1);
  EXPECT_EQ(at("modelplane_loader_read_bytes_total{" + labels + "}"), 125'000);
  EXPECT_EQ(at("modelplane_loader_tensor_bytes_total{" + labels + "}"), 100'000);
  EXPECT_EQ(at("modelplane_loader_read_amplification_ratio{" + labels + "}"), 1.25);
  EXPECT_EQ(at("modelplane_loader_fallbacks_total{" + labels + "}"), 2);
  EXPECT_EQ(at("modelplane_loader_queue_depth_limit{" + labels + "}"), 8);
  EXPECT_EQ(at("modelplane_loader_reads_in_flight_max{" + labels + "}"), 6);
  EXPECT_EQ(at("modelplane_loader_reads_in_flight_mean{" + labels + "}"), 4.5);
  for (const auto& [mode, count] :
       std::map<std::string, double>{{"direct", 1}, {"buffered", 1}, {"mapped", 0}, {"gds", 1}}) {
    EXPECT_EQ(at(fmt::format("modelplane_loader_files_total{{{},mode=\"{}\"}}", labels, mode)),
              count);
  }
  for (const auto& [kind, bytes] :
       std::map<std::string, double>{{"pinned", 1 << 20}, {"staging", 4096}, {"output", 0}}) {
    EXPECT_EQ(at(fmt::format("modelplane_loader_host_memory_high_water_bytes{{{},kind=\"{}\"}}",
                             labels, kind)),
              bytes);
  }
  // The request histogram: LoadStats' power-of-two buckets, cumulative, with the exact sum.
  const std::string request = "modelplane_loader_read_request_size_bytes";
  EXPECT_EQ(exposition.types.at(request), "histogram");
  EXPECT_EQ(at(request + "_bucket{" + labels + ",le=\"4096\"}"), 3);
  EXPECT_EQ(at(request + "_bucket{" + labels + ",le=\"8192\"}"), 5);
  EXPECT_EQ(at(request + "_bucket{" + labels + ",le=\"8388608\"}"), 5);
  EXPECT_EQ(at(request + "_bucket{" + labels + ",le=\"16777216\"}"), 6);
  EXPECT_EQ(at(request + "_bucket{" + labels + ",le=\"67108864\"}"), 6);
  EXPECT_EQ(at(request + "_bucket{" + labels + ",le=\"+Inf\"}"), 7);
  EXPECT_EQ(at(request + "_count{" + labels + "}"), 7);
  EXPECT_EQ(at(request + "_sum{" + labels + "}"),
            3 * 4096 + 6000 + 7000 + (16 << 20) + (std::uint64_t{100} << 20));
  const std::string duration = "modelplane_loader_load_duration_seconds";
  EXPECT_EQ(at(duration + "_bucket{" + labels + ",le=\"1\"}"), 0);
  EXPECT_EQ(at(duration + "_bucket{" + labels + ",le=\"2.5\"}"), 1);
  EXPECT_EQ(at(duration + "_sum{" + labels + "}"), 1.5);
  // Families without a sample yet still announce themselves.
  EXPECT_EQ(exposition.types.at("modelplane_loader_load_failures_total"), "counter");
  for (const auto& [name, type] : exposition.types) {
    EXPECT_TRUE(name.starts_with("modelplane_loader_")) << name;
    EXPECT_EQ(type == "counter", name.ends_with("_total")) << name;
  }
}

TEST(LoaderMetricsTest, CountersAddUpAndGaugesTakeTheLastLoad) {
  auto metrics = LoaderMetrics::Create();
  ASSERT_TRUE(metrics);
  LoadStats first = SampleStats();
  LoadStats second = SampleStats();
  second.bytes_read = 100'000;
  second.max_in_flight = 2;
  second.request_size_histogram = {};
  second.request_size_bytes = {};
  second.requests = 0;
  second.CountRequest(12'345);
  ASSERT_TRUE((*metrics)->RecordLoad(first));
  ASSERT_TRUE((*metrics)->RecordLoad(second));
  LoadStats other_rank = SampleStats();
  other_rank.rank = 0;
  other_rank.device = "cpu";
  ASSERT_TRUE((*metrics)->RecordLoad(other_rank));

  const auto s = Parse((*metrics)->ExposeText()).samples;
  const std::string labels = R"({rank="3",device="cuda"})";
  EXPECT_EQ(s.at(R"(modelplane_loader_loads_total{rank="3",device="cuda",engine="io_uring"})"), 2);
  EXPECT_EQ(s.at("modelplane_loader_read_bytes_total" + labels), 225'000);
  EXPECT_EQ(s.at("modelplane_loader_tensor_bytes_total" + labels), 200'000);
  EXPECT_EQ(s.at("modelplane_loader_read_amplification_ratio" + labels), 1.0);
  EXPECT_EQ(s.at("modelplane_loader_reads_in_flight_max" + labels), 2);
  EXPECT_EQ(s.at("modelplane_loader_read_request_size_bytes_count" + labels), 8);
  EXPECT_EQ(s.at(R"(modelplane_loader_read_bytes_total{rank="0",device="cpu"})"), 125'000);
}

TEST(LoaderMetricsTest, CountsFailuresByCode) {
  auto metrics = LoaderMetrics::Create();
  ASSERT_TRUE(metrics);
  ASSERT_TRUE((*metrics)->RecordFailure(1, DeviceKind::kCpu, core::ErrorCode::kDataLoss));
  ASSERT_TRUE((*metrics)->RecordFailure(1, DeviceKind::kCpu, core::ErrorCode::kDataLoss));
  ASSERT_TRUE((*metrics)->RecordFailure(0, DeviceKind::kCuda, core::ErrorCode::kUnavailable));
  const auto s = Parse((*metrics)->ExposeText()).samples;
  EXPECT_EQ(
      s.at(R"(modelplane_loader_load_failures_total{rank="1",device="cpu",code="data_loss"})"), 2);
  EXPECT_EQ(
      s.at(R"(modelplane_loader_load_failures_total{rank="0",device="cuda",code="unavailable"})"),
      1);
}

TEST(LoaderMetricsTest, LabelLimitLeavesALoadWhollyUnrecorded) {
  auto metrics = LoaderMetrics::Create();
  ASSERT_TRUE(metrics);
  LoadStats stats = SampleStats();
  // The files and host-memory families hold several children per rank, so they fill first.
  std::uint32_t rank = 0;
  core::Status status = core::Ok();
  for (; rank < kLoaderMetricsMaxChildren && status; ++rank) {
    stats.rank = rank;
    status = (*metrics)->RecordLoad(stats);
  }
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), core::ErrorCode::kResourceExhausted);
  const auto s = Parse((*metrics)->ExposeText()).samples;
  const std::string refused = fmt::format(R"({{rank="{}",device="cuda"}})", rank - 1);
  EXPECT_FALSE(s.contains("modelplane_loader_read_bytes_total" + refused));
  EXPECT_EQ(s.at(fmt::format(R"(modelplane_loader_read_bytes_total{{rank="{}",device="cuda"}})",
                             rank - 2)),
            125'000);
}

TEST(LoaderMetricsTest, DeviceLabelIsTheKindOnly) {
  EXPECT_EQ(DeviceKindName(DeviceKind::kCpu), "cpu");
  EXPECT_EQ(DeviceKindName(DeviceKind::kCuda), "cuda");
  EXPECT_EQ(DeviceKindName(DeviceKind::kNone), "none");
}

}  // namespace
}  // namespace modelplane::agent
