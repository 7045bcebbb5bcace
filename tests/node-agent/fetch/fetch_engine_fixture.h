// The fetch engine tests' fixture: a store in a temporary folder, a generated revision (odd
// sizes, a file smaller than a range, an empty file, two paths with one content) in an
// "origin" and a "mirror" folder that ScriptedSources read, and helpers to fetch and check.
#pragma once

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "core/metrics/metrics_registry.h"
#include "node-agent/fetch/fetch_engine.h"
#include "tests/node-agent/fetch/scripted_source.h"

namespace modelplane::agent {

constexpr std::uint64_t kRange = 64 * 1024;

class FetchEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = std::filesystem::temp_directory_path() /
            fmt::format("fetch-engine-test-{}-{}", ::getpid(),
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(base_);
    std::filesystem::create_directories(base_ / "origin");
    std::filesystem::create_directories(base_ / "mirror");
    // Odd sizes, a file smaller than a range, an empty file, and two paths with one content.
    AddFile("model-00001-of-00002.safetensors", 5 * kRange + 4321, 1);
    AddFile("model-00002-of-00002.safetensors", 3 * kRange, 2);
    AddFile("config.json", 777, 3);
    AddFile("empty.txt", 0, 4);
    AddFile("copies/model-00002-of-00002.safetensors", 3 * kRange, 2);
    auto metrics = FetchMetrics::Register(registry_);
    ASSERT_TRUE(metrics);
    metrics_.emplace(*metrics);
    OpenStore();
  }
  void TearDown() override {
    engine_.reset();
    store_.reset();
    std::filesystem::remove_all(base_);
  }

  void OpenStore(std::uint64_t capacity = 0, const std::filesystem::path& root = {}) {
    engine_.reset();
    store_.reset();
    auto store = CacheStore::Open({.root = root.empty() ? base_ / "cache" : root,
                                   .capacity_bytes = capacity,
                                   .headroom_bytes = 0});
    ASSERT_TRUE(store) << store.error().ToString();
    store_ = std::move(*store);
    auto engine = FetchEngine::Create(options_, {.store = store_.get(),
                                                 .health = &health_,
                                                 .metrics = &*metrics_,
                                                 .logger = logger_ ? &*logger_ : nullptr,
                                                 .clock = &clock_,
                                                 .admission = admission_.get(),
                                                 .telemetry = &telemetry_,
                                                 .write_throttle = write_throttle_.get()});
    ASSERT_TRUE(engine) << engine.error().ToString();
    engine_ = std::move(*engine);
  }

  void AddFile(const std::string& path, std::size_t size, unsigned seed) {
    std::mt19937 random(seed);
    std::string content(size, '\0');
    for (char& c : content) c = static_cast<char>(random());
    for (const char* folder : {"origin", "mirror"}) {
      std::filesystem::create_directories((base_ / folder / path).parent_path());
      std::ofstream(base_ / folder / path, std::ios::binary) << content;
    }
    request_.files.push_back({.path = path, .size = size, .sha256 = core::Sha256Of(content)});
    contents_[path] = content;
  }

  // Leaves an interrupted staging of request_.files[0] on disk, as a killed agent does: its
  // first `ranges` ranges written and recorded in the progress record, with one byte flipped
  // in them when `corrupt` (a torn or rotted write the record cannot tell). Then reopens the
  // store, as the restarted agent would.
  void LeaveInterruptedStaging(std::size_t ranges, bool corrupt) {
    const FetchFile& file = request_.files[0];
    std::string content = contents_[file.path];
    ASSERT_LE(ranges * kRange, content.size());
    if (corrupt) content[ranges * kRange / 2] ^= 0x10;
    {
      auto partial = store_->BeginBlob(file.sha256, file.size, kRange);
      ASSERT_TRUE(partial) << partial.error().ToString();
      const std::unique_ptr<void, decltype(&std::free)> memory(
          std::aligned_alloc(kDirectIoAlignment, kRange), &std::free);
      for (std::size_t index = 0; index < ranges; ++index) {
        std::memcpy(memory.get(), content.data() + index * kRange, kRange);
        ASSERT_TRUE((*partial)->WriteRange(
            index, std::span<const std::byte>(static_cast<std::byte*>(memory.get()), kRange),
            kRange));
        ASSERT_TRUE((*partial)->MarkRangeDone(index));
      }
      store_->SuspendBlob(std::move(*partial));
    }
    OpenStore();
    ASSERT_EQ(store_->recovery().resumable_partials, 1u);
  }

  // Remote sources (those with an admission key) then need the node's grants.
  void EnableAdmission(std::vector<core::api::StreamGrant> grants) {
    admission_ = std::make_unique<SourceAdmission>(
        clock_, AdmissionOptions{.enabled = true, .start_grace = std::chrono::seconds(0)});
    for (auto& grant : grants) {
      grant.expires_at = std::chrono::time_point_cast<std::chrono::microseconds>(
          clock_.WallNow() + std::chrono::minutes(10));
    }
    admission_->SetGrants(grants);
    OpenStore();
  }

  void CaptureLog() {
    auto logger = core::Logger::Create({.component = "fetch-engine-test",
                                        .level = core::LogLevel::kDebug,
                                        .sink = core::LogSink::Stream(log_)});
    ASSERT_TRUE(logger) << logger.error().ToString();
    logger_.emplace(std::move(*logger));
    OpenStore();
  }

  core::Result<FetchReport> Fetch(std::vector<RangeSource*> sources, FetchReport* out = nullptr) {
    request_.sources = std::move(sources);
    core::CancellationToken cancel;
    return engine_->Fetch(request_, cancel, {}, out);
  }

  void ExpectAllPublished() {
    auto manifest = store_->FindRevision(request_.revision_digest);
    ASSERT_TRUE(manifest);
    for (const FetchFile& file : request_.files) {
      auto blob = store_->FindVerifiedBlob(file.sha256);
      ASSERT_TRUE(blob) << file.path;
      std::ifstream in(blob->path, std::ios::binary);
      const std::string stored((std::istreambuf_iterator<char>(in)), {});
      EXPECT_EQ(stored, contents_[file.path]) << file.path;
    }
    EXPECT_TRUE(std::filesystem::is_empty(store_->layout().TemporaryDirectory()));
    EXPECT_EQ(store_->Usage().reserved_bytes, 0u);
  }

  std::uint64_t UniqueBytes() const {
    std::set<core::Sha256Bytes> seen;
    std::uint64_t total = 0;
    for (const FetchFile& file : request_.files) {
      if (seen.insert(file.sha256).second) total += file.size;
    }
    return total;
  }

  std::filesystem::path base_;
  FetchOptions options_{.range_size = kRange,
                        .max_in_flight = 4,
                        .buffer_pool_bytes = 8 * kRange,
                        .range_timeout = std::chrono::milliseconds(300),
                        .attempts_per_source = 3,
                        .backoff_base = std::chrono::milliseconds(1),
                        .backoff_max = std::chrono::milliseconds(5)};
  core::SystemClock clock_;
  SourceHealth health_{clock_, std::chrono::seconds(60)};
  core::MetricsRegistry registry_;
  std::optional<FetchMetrics> metrics_;
  std::ostringstream log_;  // declared before logger_, which writes to it
  std::optional<core::Logger> logger_;
  std::unique_ptr<SourceAdmission> admission_;
  std::unique_ptr<core::ByteThrottle> write_throttle_;
  SourceTelemetryRecorder telemetry_{clock_, std::chrono::seconds(60)};
  std::unique_ptr<CacheStore> store_;
  std::unique_ptr<FetchEngine> engine_;
  FetchRequest request_{.revision_digest = core::Sha256Of("revision"), .name = "default/m"};
  std::map<std::string, std::string> contents_;
};

}  // namespace modelplane::agent
