#include "node-agent/loader/safetensors_loader.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/metrics/text_format.h"
#include "node-agent/loader/loader_metrics.h"

namespace modelplane::agent {
namespace {

namespace fs = std::filesystem;

struct TestTensor {
  std::string name;
  core::Dtype dtype;
  std::vector<std::uint64_t> shape;
  std::vector<std::byte> bytes;
};

std::vector<std::byte> RandomBytes(std::size_t count, std::uint32_t seed) {
  std::mt19937 generator(seed);
  std::vector<std::byte> bytes(count);
  for (std::byte& byte : bytes) byte = static_cast<std::byte>(generator() & 0xff);
  return bytes;
}

TestTensor MakeTensor(std::string name, core::Dtype dtype, std::vector<std::uint64_t> shape,
                      std::uint32_t seed) {
  std::uint64_t bits = core::DtypeBits(dtype);
  for (std::uint64_t dim : shape) bits *= dim;
  return TestTensor{std::move(name), dtype, std::move(shape), RandomBytes(bits / 8, seed)};
}

// Writes the layout the safetensors package writes: prefix, JSON padded with spaces to 8.
void WriteSafetensors(const fs::path& path, const std::vector<TestTensor>& tensors) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::uint64_t offset = 0;
  for (const TestTensor& tensor : tensors) {
    header[tensor.name] = {{"dtype", std::string(core::DtypeName(tensor.dtype))},
                           {"shape", tensor.shape},
                           {"data_offsets", {offset, offset + tensor.bytes.size()}}};
    offset += tensor.bytes.size();
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text.push_back(' ');
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const std::uint64_t length = text.size();
  char prefix[8];
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  out.write(prefix, 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const TestTensor& tensor : tensors) {
    out.write(reinterpret_cast<const char*>(tensor.bytes.data()),
              static_cast<std::streamsize>(tensor.bytes.size()));
  }
}

// The tensors every dtype test loads: each dtype the format knows, odd sizes so ranges do not
// fall on block boundaries, and one tensor larger than several requests.
std::vector<TestTensor> EveryDtype() {
  std::vector<TestTensor> tensors;
  std::uint32_t seed = 1;
  for (core::Dtype dtype :
       {core::Dtype::kBool,   core::Dtype::kF4,  core::Dtype::kF6E2M3, core::Dtype::kF6E3M2,
        core::Dtype::kU8,     core::Dtype::kI8,  core::Dtype::kF8E5M2, core::Dtype::kF8E4M3,
        core::Dtype::kF8E8M0, core::Dtype::kI16, core::Dtype::kU16,    core::Dtype::kF16,
        core::Dtype::kBF16,   core::Dtype::kI32, core::Dtype::kU32,    core::Dtype::kF32,
        core::Dtype::kC64,    core::Dtype::kF64, core::Dtype::kI64,    core::Dtype::kU64}) {
    tensors.push_back(
        MakeTensor(fmt::format("t.{}", core::DtypeName(dtype)), dtype, {12, 20}, seed++));
  }
  tensors.push_back(MakeTensor("empty", core::Dtype::kF32, {0, 7}, seed++));
  tensors.push_back(MakeTensor("big", core::Dtype::kBF16, {300, 1000}, seed++));
  return tensors;
}

class LoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "mp-loader-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (mounted_) ::umount2(mount_dir_.c_str(), MNT_DETACH);
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // A ramfs, which refuses O_DIRECT at open (tmpfs accepts it since Linux 6.6).
  bool MountRamfs() {
    mount_dir_ = dir_ / "ramfs";
    fs::create_directories(mount_dir_);
    mounted_ = ::mount("ramfs", mount_dir_.c_str(), "ramfs", 0, "size=64m") == 0;
    return mounted_;
  }

  static void ExpectBytes(const LoadResult& result, const std::vector<TestTensor>& expected) {
    ASSERT_EQ(result.tensors().size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const LoadedTensor& tensor = result.tensors()[i];
      EXPECT_EQ(tensor.name, expected[i].name);
      EXPECT_EQ(tensor.dtype, expected[i].dtype);
      EXPECT_EQ(tensor.shape, expected[i].shape);
      ASSERT_EQ(tensor.bytes, expected[i].bytes.size()) << tensor.name;
      if (tensor.bytes > 0) {
        EXPECT_EQ(std::memcmp(tensor.data, expected[i].bytes.data(), tensor.bytes), 0)
            << tensor.name;
      }
    }
  }

  fs::path dir_;
  fs::path mount_dir_;
  bool mounted_ = false;
};

TEST_F(LoaderTest, LoadsEveryDtypeByteExactWithEachEngineAndIoMode) {
  const auto tensors = EveryDtype();
  const fs::path file = dir_ / "model.safetensors";
  WriteSafetensors(file, tensors);
  for (EngineKind engine : {EngineKind::kIoUring, EngineKind::kThreadPool}) {
    for (IoMode io : {IoMode::kDirect, IoMode::kBuffered}) {
      LoadOptions options{
          .request_bytes = 64 << 10, .queue_depth = 4, .engine = engine, .io_mode = io};
      auto result = LoadSafetensors({file.string()}, options);
      if (!result && engine == EngineKind::kIoUring &&
          result.error().code() == core::ErrorCode::kUnavailable) {
        GTEST_SKIP() << "io_uring refused here: " << result.error().ToString();
      }
      ASSERT_TRUE(result) << result.error().ToString();
      SCOPED_TRACE(result->stats().ToJson());
      ExpectBytes(*result, tensors);
      EXPECT_EQ(result->stats().engine, EngineKindName(engine));
      EXPECT_EQ(result->stats().files_direct, io == IoMode::kDirect ? 1u : 0u);
      EXPECT_GT(result->stats().requests, 5u);  // the big tensor took several requests
      EXPECT_LE(result->stats().max_in_flight, 4u);
      EXPECT_EQ(result->stats().ring_bytes, 0u);  // every range went straight into place
    }
  }
}

TEST_F(LoaderTest, ResolvesFoldersAndIndexes) {
  WriteSafetensors(dir_ / "b.safetensors", {MakeTensor("y", core::Dtype::kF32, {3}, 1)});
  WriteSafetensors(dir_ / "a.safetensors", {MakeTensor("x", core::Dtype::kF32, {3}, 2)});
  auto files = ResolveCheckpointFiles(dir_.string());
  ASSERT_TRUE(files);
  EXPECT_EQ(*files, (std::vector<std::string>{(dir_ / "a.safetensors").string(),
                                              (dir_ / "b.safetensors").string()}));
  std::ofstream(dir_ / "model.safetensors.index.json")
      << R"({"weight_map": {"y": "b.safetensors"}})";
  files = ResolveCheckpointFiles(dir_.string());
  ASSERT_TRUE(files);
  EXPECT_EQ(*files, std::vector<std::string>{(dir_ / "b.safetensors").string()});
  std::ofstream(dir_ / "model.safetensors.index.json")
      << R"({"weight_map": {"y": "../etc/passwd"}})";
  EXPECT_FALSE(ResolveCheckpointFiles(dir_.string()));
}

// Four ranks: every rank's tensors equal the matching slice of the full tensors, and the bytes
// it read are its own (the stats say so).
TEST_F(LoaderTest, RankAwareLoadsEqualSlicesAndReadOnlyTheirRanges) {
  const std::vector<TestTensor> tensors = {
      MakeTensor("layer.q_proj.weight", core::Dtype::kF32, {512, 256}, 1),  // 512 KiB, rows
      MakeTensor("layer.o_proj.weight", core::Dtype::kBF16, {64, 512}, 2),  // columns
      MakeTensor("lm_head.weight", core::Dtype::kF16, {128, 64}, 3),        // rank 3 only
      MakeTensor("norm.weight", core::Dtype::kF32, {33}, 4),                // replicated
  };
  const fs::path file = dir_ / "model.safetensors";
  WriteSafetensors(file, tensors);
  auto rules = ParseShardRules("*.q_proj.weight=split:0;*.o_proj.weight=split:1;lm_head*=rank:3");
  ASSERT_TRUE(rules);
  const std::uint32_t world = 4;
  for (IoMode io : {IoMode::kBuffered, IoMode::kDirect}) {
    for (std::uint32_t rank = 0; rank < world; ++rank) {
      LoadOptions options{.rank = rank,
                          .world_size = world,
                          .rules = *rules,
                          .request_bytes = 64 << 10,
                          .io_mode = io,
                          .coalesce_gap_bytes = 0};
      auto result = LoadSafetensors({file.string()}, options);
      ASSERT_TRUE(result) << result.error().ToString();
      const LoadStats& stats = result->stats();
      SCOPED_TRACE(stats.ToJson());
      std::uint64_t needed = 0;
      for (const LoadedTensor& tensor : result->tensors()) {
        const TestTensor& full =
            *std::find_if(tensors.begin(), tensors.end(),
                          [&](const TestTensor& t) { return t.name == tensor.name; });
        std::vector<std::byte> expected;
        if (tensor.name == "layer.q_proj.weight") {
          const std::size_t part = full.bytes.size() / world;
          const auto first = full.bytes.begin() + static_cast<std::ptrdiff_t>(rank * part);
          expected.assign(first, first + static_cast<std::ptrdiff_t>(part));
          EXPECT_EQ(tensor.shape, (std::vector<std::uint64_t>{128, 256}));
        } else if (tensor.name == "layer.o_proj.weight") {
          const std::size_t row = 512 * 2;
          const std::size_t part = row / world;
          for (std::size_t r = 0; r < 64; ++r) {
            const auto begin =
                full.bytes.begin() + static_cast<std::ptrdiff_t>(r * row + rank * part);
            expected.insert(expected.end(), begin, begin + static_cast<std::ptrdiff_t>(part));
          }
          EXPECT_EQ(tensor.shape, (std::vector<std::uint64_t>{64, 128}));
        } else {
          expected = full.bytes;
        }
        ASSERT_EQ(tensor.bytes, expected.size()) << tensor.name;
        EXPECT_EQ(std::memcmp(tensor.data, expected.data(), expected.size()), 0) << tensor.name;
        needed += expected.size();
      }
      EXPECT_EQ(result->tensors().size(), rank == 3 ? 4u : 3u);
      EXPECT_EQ(stats.bytes_needed, needed);
      if (io == IoMode::kBuffered) {
        EXPECT_EQ(stats.bytes_read, stats.bytes_needed);  // exactly its ranges, nothing else
      } else {
        // O_DIRECT rounds each range out to 4 KiB blocks: at most two partial blocks per run
        // and per column-split row, never another rank's rows of q_proj.
        EXPECT_LE(stats.bytes_read, stats.bytes_needed + (4 + 64) * 2 * 4096);
        EXPECT_LT(stats.bytes_read, 512u * 256 * 4 / world + 256u * 1024);
      }
    }
  }
}

// The figures of real loads, one per rank, as the metrics the CLI and the Python collector
// expose: each rank's bytes and requests exactly as its stats counted them.
TEST_F(LoaderTest, LoadFiguresBecomeMetricsPerRank) {
  const std::vector<TestTensor> tensors = {
      MakeTensor("layer.q_proj.weight", core::Dtype::kF32, {512, 256}, 1),
      MakeTensor("layer.o_proj.weight", core::Dtype::kBF16, {64, 512}, 2),
  };
  const fs::path file = dir_ / "model.safetensors";
  WriteSafetensors(file, tensors);
  auto rules = ParseShardRules("*.q_proj.weight=split:0;*.o_proj.weight=split:1");
  ASSERT_TRUE(rules);
  auto metrics = LoaderMetrics::Create();
  ASSERT_TRUE(metrics);
  std::vector<LoadStats> all;
  for (std::uint32_t rank = 0; rank < 2; ++rank) {
    LoadOptions options{.rank = rank,
                        .world_size = 2,
                        .rules = *rules,
                        .request_bytes = 64 << 10,
                        .io_mode = IoMode::kDirect};
    auto result = LoadSafetensors({file.string()}, options);
    ASSERT_TRUE(result) << result.error().ToString();
    ASSERT_TRUE((*metrics)->RecordLoad(result->stats()));
    all.push_back(result->stats());
  }
  ASSERT_TRUE((*metrics)->RecordFailure(0, DeviceKind::kCpu, core::ErrorCode::kNotFound));
  const std::string text = (*metrics)->ExposeText();
  auto expect_sample = [&text](const std::string& series, double value) {
    EXPECT_NE(text.find("\n" + series + " " + core::FormatSampleValue(value) + "\n"),
              std::string::npos)
        << series << " " << value << " not in\n"
        << text;
  };
  for (const LoadStats& stats : all) {
    SCOPED_TRACE(stats.ToJson());
    EXPECT_GT(stats.requests, 1u);
    const std::string labels = fmt::format(R"(rank="{}",device="cpu")", stats.rank);
    std::uint64_t requested = 0;
    for (const std::uint64_t bytes : stats.request_size_bytes) requested += bytes;
    expect_sample("modelplane_loader_read_bytes_total{" + labels + "}",
                  static_cast<double>(stats.bytes_read));
    expect_sample("modelplane_loader_tensor_bytes_total{" + labels + "}",
                  static_cast<double>(stats.bytes_needed));
    expect_sample("modelplane_loader_read_amplification_ratio{" + labels + "}",
                  stats.ReadAmplification());
    expect_sample("modelplane_loader_read_request_size_bytes_count{" + labels + "}",
                  static_cast<double>(stats.requests));
    expect_sample("modelplane_loader_read_request_size_bytes_sum{" + labels + "}",
                  static_cast<double>(requested));
    expect_sample("modelplane_loader_queue_depth_limit{" + labels + "}", kDefaultQueueDepth);
    expect_sample("modelplane_loader_reads_in_flight_max{" + labels + "}", stats.max_in_flight);
    expect_sample("modelplane_loader_host_memory_high_water_bytes{" + labels + R"(,kind="output"})",
                  static_cast<double>(stats.host_output_bytes));
  }
  expect_sample(R"(modelplane_loader_load_failures_total{rank="0",device="cpu",code="not_found"})",
                1);
}

TEST_F(LoaderTest, ColumnSplitsThroughASmallRing) {
  const std::vector<TestTensor> tensors = {MakeTensor("w", core::Dtype::kF32, {2048, 64}, 9)};
  const fs::path file = dir_ / "model.safetensors";
  WriteSafetensors(file, tensors);
  LoadOptions options{.rank = 1,
                      .world_size = 2,
                      .rules = *ParseShardRules("w=split:1"),
                      .request_bytes = 8192,
                      .queue_depth = 8,
                      .ring_bytes = 16384,
                      .io_mode = IoMode::kDirect};
  auto result = LoadSafetensors({file.string()}, options);
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_EQ(result->stats().ring_slots, 2u);
  EXPECT_EQ(result->stats().ring_bytes, 16384u);
  EXPECT_LE(result->stats().max_in_flight, 2u);  // bounded by the ring, not the queue
  const LoadedTensor& w = result->tensors()[0];
  for (std::size_t r = 0; r < 2048; ++r) {
    ASSERT_EQ(std::memcmp(w.data + r * 128, tensors[0].bytes.data() + r * 256 + 128, 128), 0);
  }
}

TEST_F(LoaderTest, FallsBackToBufferedWhereODirectIsRefused) {
  if (!MountRamfs()) GTEST_SKIP() << "cannot mount a ramfs here (needs root)";
  const auto tensors = EveryDtype();
  const fs::path file = mount_dir_ / "model.safetensors";
  WriteSafetensors(file, tensors);
  LoadOptions options{.io_mode = IoMode::kDirect};
  auto result = LoadSafetensors({file.string()}, options);
  ASSERT_TRUE(result) << result.error().ToString();
  ExpectBytes(*result, tensors);
  EXPECT_EQ(result->stats().files_direct, 0u);
  EXPECT_EQ(result->stats().files_buffered, 1u);
  ASSERT_EQ(result->stats().fallbacks.size(), 1u);
  EXPECT_NE(result->stats().fallbacks[0].find("O_DIRECT refused"), std::string::npos);
}

TEST_F(LoaderTest, AutoModeReadsCachedFilesThroughThePageCache) {
  const auto tensors = EveryDtype();
  const fs::path file = dir_ / "model.safetensors";
  WriteSafetensors(file, tensors);
  {  // read it once so it is cached, whatever the page cache held before
    std::ifstream in(file, std::ios::binary);
    std::vector<char> sink(1 << 20);
    while (in.read(sink.data(), static_cast<std::streamsize>(sink.size()))) {
    }
  }
  auto result = LoadSafetensors({file.string()}, LoadOptions{});
  ASSERT_TRUE(result) << result.error().ToString();
  ExpectBytes(*result, tensors);
  EXPECT_EQ(result->stats().files_buffered, 1u);
  // On the CPU the cached pages are the tensors: no read requests, no fresh memory for them.
  EXPECT_EQ(result->stats().files_mapped, 1u);
  EXPECT_EQ(result->stats().requests, 0u);
  EXPECT_EQ(result->stats().bytes_read, result->stats().bytes_needed);
  // A private mapping: writing a tensor changes neither the file nor a second load.
  std::memset(result->tensors().back().data, 0, 16);
  auto again = LoadSafetensors({file.string()}, LoadOptions{});
  ASSERT_TRUE(again);
  ExpectBytes(*again, tensors);
}

TEST_F(LoaderTest, DeviceNoneStreamsThroughTheRingOnly) {
  const auto tensors = EveryDtype();
  const fs::path file = dir_ / "model.safetensors";
  WriteSafetensors(file, tensors);
  LoadOptions options{.device = {.kind = DeviceKind::kNone},
                      .request_bytes = 16384,
                      .queue_depth = 3,
                      .io_mode = IoMode::kDirect};
  auto result = LoadSafetensors({file.string()}, options);
  ASSERT_TRUE(result) << result.error().ToString();
  const LoadStats& stats = result->stats();
  EXPECT_EQ(stats.host_output_bytes, 0u);
  EXPECT_EQ(stats.ring_bytes, 3u * 16384);
  EXPECT_EQ(stats.host_staging_bytes, stats.ring_bytes + stats.header_bytes);
  EXPECT_GE(stats.bytes_read, stats.bytes_needed);
  for (const LoadedTensor& tensor : result->tensors()) EXPECT_EQ(tensor.data, nullptr);
}

TEST_F(LoaderTest, CudaAbsentIsUnavailable) {
  const fs::path file = dir_ / "model.safetensors";
  WriteSafetensors(file, {MakeTensor("x", core::Dtype::kF32, {4}, 1)});
  // The test's only thread changes the environment while no other reads it.
  // NOLINTNEXTLINE(concurrency-mt-unsafe)
  ::setenv("MODELPLANE_CUDART_LIBRARY", (dir_ / "no-libcudart.so").c_str(), 1);
  auto result = LoadSafetensors({file.string()}, LoadOptions{.device = *ParseLoadDevice("cuda:0")});
  ::unsetenv("MODELPLANE_CUDART_LIBRARY");  // NOLINT(concurrency-mt-unsafe)
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), core::ErrorCode::kUnavailable);
  EXPECT_NE(result.error().message().find("no CUDA runtime"), std::string::npos);
}

TEST_F(LoaderTest, RejectsTruncatedFilesAndHostileHeadersBeforeAllocating) {
  const fs::path file = dir_ / "model.safetensors";
  WriteSafetensors(file, EveryDtype());
  fs::resize_file(file, fs::file_size(file) - 100);
  auto truncated = LoadSafetensors({file.string()}, LoadOptions{});
  ASSERT_FALSE(truncated);
  EXPECT_EQ(truncated.error().code(), core::ErrorCode::kInvalidArgument);

  // A length prefix that claims 2^62 bytes of header: refused without allocating them.
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      << std::string("\x00\x00\x00\x00\x00\x00\x00\x40{}", 10);
  auto huge = LoadSafetensors({file.string()}, LoadOptions{});
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code(), core::ErrorCode::kInvalidArgument);

  // Offsets that point past the data.
  std::string header = R"({"x":{"dtype":"F32","shape":[1000000],"data_offsets":[0,4000000]}})";
  std::string body(8, '\0');
  body[0] = static_cast<char>(header.size());
  std::ofstream(file, std::ios::binary | std::ios::trunc) << body << header << "abcd";
  auto lying = LoadSafetensors({file.string()}, LoadOptions{});
  ASSERT_FALSE(lying);
  EXPECT_EQ(lying.error().code(), core::ErrorCode::kInvalidArgument);

  fs::resize_file(file, 3);
  EXPECT_FALSE(LoadSafetensors({file.string()}, LoadOptions{}));
}

TEST_F(LoaderTest, FileTruncatedDuringTheLoadIsDataLoss) {
  const fs::path file = dir_ / "model.safetensors";
  WriteSafetensors(file, {MakeTensor("big", core::Dtype::kF32, {1 << 18}, 1)});  // 1 MiB
  bool truncated = false;
  LoadOptions options{.request_bytes = 64 << 10, .queue_depth = 1, .io_mode = IoMode::kBuffered};
  options.on_progress = [&](std::uint64_t) {
    if (!truncated) fs::resize_file(file, 300000);
    truncated = true;
  };
  auto result = LoadSafetensors({file.string()}, options);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), core::ErrorCode::kDataLoss) << result.error().ToString();
}

TEST_F(LoaderTest, FileModifiedDuringTheLoadIsDataLoss) {
  const fs::path file = dir_ / "model.safetensors";
  WriteSafetensors(file, {MakeTensor("big", core::Dtype::kF32, {1 << 18}, 1)});
  bool touched = false;
  LoadOptions options{.request_bytes = 64 << 10, .queue_depth = 1, .io_mode = IoMode::kBuffered};
  options.on_progress = [&](std::uint64_t) {
    if (touched) return;
    touched = true;
    // Same size, new bytes in place: only the modification time tells.
    const int fd = ::open(file.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    const timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
    ASSERT_EQ(::pwrite(fd, "zzzz", 4, 500000), 4);
    ASSERT_EQ(::futimens(fd, times), 0);
    ::close(fd);
  };
  auto result = LoadSafetensors({file.string()}, options);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), core::ErrorCode::kDataLoss);
  EXPECT_NE(result.error().message().find("changed during the load"), std::string::npos);
}

TEST_F(LoaderTest, RejectsBadOptions) {
  const fs::path file = dir_ / "model.safetensors";
  WriteSafetensors(file, {MakeTensor("x", core::Dtype::kF32, {4}, 1)});
  EXPECT_FALSE(LoadSafetensors({file.string()}, LoadOptions{.request_bytes = 1000}));
  // One block: a staged read starting inside a block would never fit (the planner looped).
  EXPECT_FALSE(LoadSafetensors({file.string()}, LoadOptions{.request_bytes = 4096}));
  EXPECT_TRUE(LoadSafetensors({file.string()}, LoadOptions{.request_bytes = 8192}));
  EXPECT_FALSE(LoadSafetensors({file.string()}, LoadOptions{.queue_depth = 0}));
  EXPECT_FALSE(LoadSafetensors({file.string()}, LoadOptions{.rank = 2, .world_size = 2}));
  EXPECT_FALSE(LoadSafetensors({}, LoadOptions{}));
  EXPECT_FALSE(LoadSafetensors({(dir_ / "missing").string()}, LoadOptions{}));
  EXPECT_FALSE(ParseLoadDevice("gpu"));
  EXPECT_FALSE(ParseLoadDevice("cuda:x"));
  EXPECT_EQ(ParseLoadDevice("cuda:3")->index, 3);
}

}  // namespace
}  // namespace modelplane::agent
