#include "node-agent/controller/stager.h"

#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/api/model_cache.h"
#include "core/config/config_loader.h"
#include "core/digest/sha256.h"
#include "core/http/http_server.h"
#include "core/policy/source_policy.h"
#include "node-agent/controller/staging_failure.h"
#include "node-agent/sources/revision_sources.h"

namespace modelplane::agent {
namespace {

// The stager with the real engine, store and shared-filesystem source over real files.
class StagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = std::filesystem::temp_directory_path() /
            fmt::format("stager-test-{}-{}", ::getpid(),
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(base_);
    std::filesystem::create_directories(base_ / "nfs");
    auto store = CacheStore::Open({.root = base_ / "cache", .headroom_bytes = 0});
    ASSERT_TRUE(store);
    store_ = std::move(*store);
    auto engine = FetchEngine::Create(
        {.range_size = 64 * 1024, .max_in_flight = 4, .buffer_pool_bytes = 1 << 20},
        {.store = store_.get(), .health = &health_, .clock = &clock_});
    ASSERT_TRUE(engine);
    engine_ = std::move(*engine);
    auto metrics = FetchMetrics::Register(registry_);
    ASSERT_TRUE(metrics);
    metrics_.emplace(*metrics);
    stager_ = std::make_unique<Stager>(
        Stager::Dependencies{.engine = engine_.get(),
                             .sources = [this](const LoadedRevision& revision)
                                 -> core::Result<std::vector<std::unique_ptr<RangeSource>>> {
                               const auto& sources = revision.revision.spec.sources;
                               if (!policy_) {
                                 return CreateRevisionSources(sources, OperatorNamedGrants(sources),
                                                              {});
                               }
                               // As the agent does: the policy's grants bind the sources.
                               auto grants = core::AuthorizeSources(
                                   &*policy_, revision.revision.metadata.namespace_name, sources);
                               if (!grants) return std::unexpected(grants.error());
                               return CreateRevisionSources(sources, *grants, {});
                             },
                             .clock = &clock_,
                             .on_change = [this] { ++changes_; },
                             .metrics = &*metrics_},
        2);
  }
  void TearDown() override {
    stager_.reset();
    engine_.reset();
    store_.reset();
    std::filesystem::remove_all(base_);
  }

  LoadedRevision Revision(const std::string& content, bool with_file,
                          std::vector<core::api::ModelSource> sources = {}) {
    if (with_file) std::ofstream(base_ / "nfs" / "model.safetensors") << content;
    core::api::ModelRevision revision;
    revision.metadata.name = "r";
    revision.metadata.namespace_name = "default";
    revision.spec.format = "safetensors";
    revision.spec.engine = {.name = "vllm", .version = "0.6.3"};
    revision.spec.files = {{.path = "model.safetensors",
                            .size = static_cast<std::int64_t>(content.size()),
                            .sha256 = core::FormatDigest(core::Sha256Of(content)),
                            .role = "weights"}};
    revision.spec.sources = {{.name = "nfs",
                              .type = "sharedFilesystem",
                              .shared_filesystem = core::api::SharedFilesystemLocation{
                                  .path = (base_ / "nfs").string()}}};
    if (!sources.empty()) revision.spec.sources = std::move(sources);
    auto loaded = CheckRevision(revision);
    EXPECT_TRUE(loaded) << loaded.error().ToString();
    return *loaded;
  }

  std::optional<StagingState> WaitFor(const core::Sha256Bytes& digest, StagingPhase phase) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < give_up) {
      auto state = stager_->State(digest);
      if (state && state->phase == phase) return state;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return stager_->State(digest);
  }

  std::filesystem::path base_;
  core::SystemClock clock_;
  core::MetricsRegistry registry_;
  std::optional<FetchMetrics> metrics_;
  SourceHealth health_{clock_, std::chrono::seconds(60)};
  std::unique_ptr<CacheStore> store_;
  std::unique_ptr<FetchEngine> engine_;
  std::unique_ptr<Stager> stager_;
  std::atomic<int> changes_{0};
  std::optional<core::SourcePolicy> policy_;  // unset: the sources as named (the CLI's grants)
};

TEST_F(StagerTest, StagesAWantedRevisionAndReportsTierAndTimes) {
  const LoadedRevision revision = Revision(std::string(300 * 1024, 'w'), true);
  stager_->Want(revision);
  auto state = WaitFor(revision.digest, StagingPhase::kReady);
  ASSERT_TRUE(state);
  ASSERT_EQ(state->phase, StagingPhase::kReady) << state->message;
  EXPECT_EQ(state->tier, "sharedFilesystem");
  EXPECT_EQ(state->bytes_done, 300u * 1024);
  EXPECT_TRUE(state->times.queued && state->times.first_byte && state->times.published);
  EXPECT_TRUE(store_->FindRevision(revision.digest));
  EXPECT_GT(changes_.load(), 0);
}

// bytes-to-ready goes into the histogram once per staging that becomes Ready, by its tier; a
// failed staging is not observed.
TEST_F(StagerTest, ObservesBytesToReadyOncePerReadyStagingByTier) {
  const LoadedRevision failing = Revision("weights missing from the source", false);
  stager_->Want(failing);
  ASSERT_TRUE(WaitFor(failing.digest, StagingPhase::kFailed));
  EXPECT_EQ(registry_.ExposeText().find("modelplane_staging_bytes_to_ready_seconds_count{"),
            std::string::npos);

  const LoadedRevision revision = Revision(std::string(200 * 1024, 'b'), true);
  stager_->Want(revision);
  auto state = WaitFor(revision.digest, StagingPhase::kReady);
  ASSERT_TRUE(state && state->phase == StagingPhase::kReady);
  stager_->Want(revision);  // held: nothing staged, nothing observed again
  const std::string text = registry_.ExposeText();
  EXPECT_NE(
      text.find("modelplane_staging_bytes_to_ready_seconds_count{tier=\"sharedFilesystem\"} 1\n"),
      std::string::npos)
      << text;
  // Within the 20 s the test waits: every observation in the buckets up to 32 s.
  EXPECT_NE(text.find("modelplane_staging_bytes_to_ready_seconds_bucket{tier=\"sharedFilesystem\","
                      "le=\"32\"} 1\n"),
            std::string::npos)
      << text;
}

TEST_F(StagerTest, FailureIsReportedAndNotRetriedBeforeItsBackoff) {
  const LoadedRevision revision = Revision("weights missing from the source", false);
  stager_->Want(revision);
  auto state = WaitFor(revision.digest, StagingPhase::kFailed);
  ASSERT_TRUE(state);
  ASSERT_EQ(state->phase, StagingPhase::kFailed);
  EXPECT_NE(state->message.find("model.safetensors"), std::string::npos) << state->message;
  EXPECT_EQ(state->reason, core::api::kCacheReasonSourceNotFound);
  // The local path the source tried stays in the log.
  EXPECT_EQ(state->message.find(base_.string()), std::string::npos) << state->message;
  ASSERT_TRUE(stager_->RetryAt(revision.digest));
  // The first retry waits 15 to 30 s (half the 30 s ceiling, jittered).
  EXPECT_GE(*stager_->RetryAt(revision.digest), clock_.Now() + std::chrono::seconds(15));
  stager_->Want(revision);  // within the backoff: stays failed
  EXPECT_EQ(stager_->State(revision.digest)->phase, StagingPhase::kFailed);
  EXPECT_FALSE(store_->FindRevision(revision.digest));
}

TEST_F(StagerTest, AMismatchSaysSoWithoutTheDigestOfWhatWasRead) {
  LoadedRevision revision = Revision("the bytes the manifest names", true);
  const std::string other = "other bytes of the same size!";
  std::ofstream(base_ / "nfs" / "model.safetensors") << other.substr(0, 28);
  stager_->Want(revision);
  auto state = WaitFor(revision.digest, StagingPhase::kFailed);
  ASSERT_TRUE(state);
  ASSERT_EQ(state->phase, StagingPhase::kFailed);
  EXPECT_EQ(state->reason, core::api::kCacheReasonVerificationFailed) << state->message;
  const std::string read_digest = core::FormatDigest(core::Sha256Of(other.substr(0, 28)));
  EXPECT_EQ(state->message.find(read_digest.substr(7, 16)), std::string::npos) << state->message;
  EXPECT_EQ(state->message.find(base_.string()), std::string::npos) << state->message;
  EXPECT_NE(state->message.find("sharedFilesystem/nfs"), std::string::npos) << state->message;
}

// DNS rebinding, end to end through the agent's path (policy grants, sources, engine, stager): an
// allowed origin whose name resolves to loopback. Without `addresses` the staging fails with its
// own reason, no connection reaches the listener, and status names no address; the rule that
// lists 127.0.0.0/8 stages the same revision from the same origin.
TEST_F(StagerTest, AnOriginResolvingToLoopbackIsRefusedUnlessItsRuleListsTheAddresses) {
  const std::string content(200 * 1024, 'h');
  std::ofstream(base_ / "nfs" / "model.safetensors") << content;
  core::Router router;
  const std::string root = (base_ / "nfs").string();
  router.HandlePrefix(
      boost::beast::http::verb::get, "/files/", [root](const core::ServerRequest& request) {
        auto file = core::FileBodySource::Open(root + "/" + request.path.substr(7));
        if (!file) {
          return core::ServerResponse::Text(boost::beast::http::status::not_found, "no");
        }
        return core::ServerResponse::Stream(std::move(*file));
      });
  auto server = core::HttpServer::Create({.threads = 2}, std::move(router));
  ASSERT_TRUE(server) << server.error().ToString();
  const std::string origin = fmt::format("http://localhost:{}/", (*server)->port());
  const std::vector<core::api::ModelSource> sources = {
      {.name = "origin",
       .type = "http",
       .http = core::api::HttpLocation{.base_url = origin + "files"}}};

  auto refusing = core::LoadConfigString<core::SourcePolicy>(
      fmt::format("httpOrigins: [{{url: \"{}\"}}]", origin));
  ASSERT_TRUE(refusing) << refusing.error().ToString();
  policy_ = *refusing;
  const LoadedRevision revision = Revision(content, true, sources);
  stager_->Want(revision);
  auto state = WaitFor(revision.digest, StagingPhase::kFailed);
  ASSERT_TRUE(state);
  ASSERT_EQ(state->phase, StagingPhase::kFailed) << state->message;
  EXPECT_EQ(state->reason, core::api::kCacheReasonSourceAddressDenied) << state->message;
  EXPECT_NE(state->message.find("http/origin"), std::string::npos) << state->message;
  EXPECT_EQ(state->message.find("127.0.0.1"), std::string::npos) << state->message;
  EXPECT_EQ((*server)->stats().accepted_connections, 0U);
  ASSERT_TRUE(stager_->RetryAt(revision.digest));  // retried on the stager's backoff only
  EXPECT_FALSE(store_->FindRevision(revision.digest));

  auto allowing = core::LoadConfigString<core::SourcePolicy>(
      fmt::format("httpOrigins: [{{url: \"{}\", addresses: [127.0.0.0/8]}}]", origin));
  ASSERT_TRUE(allowing) << allowing.error().ToString();
  policy_ = *allowing;
  stager_->Forget(revision.digest);
  stager_->Want(revision);
  state = WaitFor(revision.digest, StagingPhase::kReady);
  ASSERT_TRUE(state);
  ASSERT_EQ(state->phase, StagingPhase::kReady) << state->reason << ": " << state->message;
  EXPECT_EQ(state->tier, "http");
  EXPECT_GE((*server)->stats().accepted_connections, 1U);
  EXPECT_TRUE(store_->FindRevision(revision.digest));
}

TEST(DescribeStagingFailure, AnAddressRefusalHasItsOwnReasonAndNoAddress) {
  FetchReport report;
  report.files.push_back(
      {.path = "model.safetensors",
       .problems = {"http/origin: refused to connect to models.example:80: it resolved only to "
                    "special-purpose addresses the address policy does not allow (10.0.0.7)"},
       .source_failures = {{.source = "http/origin", .code = core::ErrorCode::kAddressDenied}}});
  const core::Error error(core::ErrorCode::kUnavailable, "no source left: http/origin: refused");
  const StagingFailure failure = DescribeStagingFailure(error, report);
  EXPECT_EQ(failure.reason, core::api::kCacheReasonSourceAddressDenied);
  EXPECT_NE(failure.message.find("http/origin"), std::string::npos);
  EXPECT_EQ(failure.message.find("10.0.0.7"), std::string::npos) << failure.message;
  EXPECT_EQ(failure.message.find("models.example"), std::string::npos) << failure.message;
}

TEST(DescribeStagingFailure, KeepsOnlyFixedTextFileAndSourceNames) {
  FetchReport report;
  report.files.push_back(
      {.path = "model-00001.safetensors",
       .problems = {"objectStore/s3: HTTP 403 from http://10.0.0.7:9000/models/x: "
                    "<Error><Code>AccessDenied</Code><Message>bucket policy</Message></Error>"},
       .source_failures = {
           {.source = "objectStore/s3", .code = core::ErrorCode::kPermissionDenied}}});
  report.files.push_back({.path = "config.json"});
  const core::Error error(core::ErrorCode::kUnavailable,
                          "file model-00001.safetensors: no source left: objectStore/s3: HTTP 403 "
                          "<Error>...</Error>");
  const StagingFailure failure = DescribeStagingFailure(error, report);
  EXPECT_EQ(failure.reason, core::api::kCacheReasonSourceAccessDenied);
  EXPECT_NE(failure.message.find("model-00001.safetensors"), std::string::npos);
  EXPECT_NE(failure.message.find("objectStore/s3"), std::string::npos);
  EXPECT_EQ(failure.message.find("config.json"), std::string::npos) << "it did not fail";
  EXPECT_EQ(failure.message.find("10.0.0.7"), std::string::npos) << failure.message;
  EXPECT_EQ(failure.message.find("Error"), std::string::npos) << failure.message;
}

}  // namespace
}  // namespace modelplane::agent
