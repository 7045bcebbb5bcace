#include "node-agent/fetch/fetch_engine.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <system_error>
#include <thread>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/api/model_revision.h"
#include "core/metrics/metrics_registry.h"
#include "node-agent/store/store_files.h"
#include "tests/node-agent/fetch/fetch_engine_fixture.h"
#include "tests/node-agent/fetch/scripted_source.h"

namespace modelplane::agent {
namespace {

using testing::ScriptedSource;

TEST_F(FetchEngineTest, StagesEveryFileByteExactAndPublishesTheRevision) {
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "origin");
  auto report = Fetch({&origin});
  ASSERT_TRUE(report) << report.error().ToString();
  ExpectAllPublished();
  EXPECT_TRUE(report->ready);
  EXPECT_EQ(report->fetched_bytes, UniqueBytes());
  EXPECT_EQ(origin.bytes_served.load(), UniqueBytes());  // the shared content came once
  EXPECT_EQ(report->tier, "objectStore");
  EXPECT_TRUE(report->times.queued && report->times.first_byte && report->times.last_byte &&
              report->times.verified && report->times.published);
  EXPECT_LE(report->buffer_high_water_bytes, options_.buffer_pool_bytes);
  EXPECT_LE(origin.max_in_flight_seen.load(), 4);
  const std::string exposition = registry_.ExposeText();
  EXPECT_NE(
      exposition.find("modelplane_fetch_bytes_total{tier=\"objectStore\",source=\"objectStore/"
                      "origin\"} " +
                      std::to_string(UniqueBytes())),
      std::string::npos)
      << exposition;
}

TEST_F(FetchEngineTest, SecondFetchIsServedFromTheCache) {
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "origin");
  ASSERT_TRUE(Fetch({&origin}));
  const int calls = origin.calls.load();
  auto again = Fetch({&origin});
  ASSERT_TRUE(again);
  EXPECT_EQ(origin.calls.load(), calls);
  EXPECT_EQ(again->tier, "local");
  EXPECT_EQ(again->fetched_bytes, 0u);
}

TEST_F(FetchEngineTest, FlippedBitsAreQuarantinedAndTheNextTierServes) {
  ScriptedSource peer("peer/10.0.0.9:7443", "peer", base_ / "origin");
  peer.flip_bits = true;
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "mirror");
  auto report = Fetch({&peer, &origin});
  ASSERT_TRUE(report) << report.error().ToString();
  ExpectAllPublished();
  EXPECT_GT(report->quarantines, 0u);
  EXPECT_EQ(report->tier, "objectStore");
  EXPECT_FALSE(health_.MayServe("peer/10.0.0.9:7443", request_.files[0].sha256));
  EXPECT_GT(health_.quarantines(), 0u);
  EXPECT_FALSE(std::filesystem::is_empty(store_->layout().QuarantineDirectory()));
  EXPECT_NE(registry_.ExposeText().find("modelplane_fetch_quarantines_total{tier=\"peer\""),
            std::string::npos);
  bool restarted = false;
  for (const FileReport& file : report->files) restarted |= file.restarts > 0;
  EXPECT_TRUE(restarted);
}

TEST_F(FetchEngineTest, AFileMixedFromALiarAndAnHonestSourceIsRefetchedFromTheHonestOne) {
  // One file of six ranges. The peer serves two of them with flipped bits, then answers 404:
  // the object store serves the other four, and the file's first attempt mixes both sources.
  request_.files.resize(1);
  ScriptedSource peer("peer/10.0.0.9:7443", "peer", base_ / "origin", 1);
  peer.flip_bits = true;
  peer.not_found_after_calls = 2;
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "mirror");
  auto report = Fetch({&peer, &origin});
  ASSERT_TRUE(report) << report.error().ToString();
  ExpectAllPublished();
  EXPECT_EQ(report->files[0].restarts, 1u);
  EXPECT_EQ(report->tier, "objectStore");
  EXPECT_FALSE(health_.MayServe("peer/10.0.0.9:7443", request_.files[0].sha256));
  EXPECT_TRUE(health_.MayServe("objectStore/origin", request_.files[0].sha256))
      << "the honest source must not be barred for the liar's bytes";
  EXPECT_EQ(registry_.ExposeText().find("modelplane_fetch_quarantines_total{tier=\"objectStore\""),
            std::string::npos);
}

TEST_F(FetchEngineTest, TruncatedSourceFallsBackWithoutQuarantine) {
  std::filesystem::resize_file(base_ / "origin" / "model-00001-of-00002.safetensors", kRange);
  ScriptedSource shared("sharedFilesystem/nfs", "sharedFilesystem", base_ / "origin");
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "mirror");
  auto report = Fetch({&shared, &origin});
  ASSERT_TRUE(report) << report.error().ToString();
  ExpectAllPublished();
  EXPECT_EQ(report->quarantines, 0u);
  const FileReport& first = report->files[0];
  ASSERT_FALSE(first.problems.empty());
  EXPECT_NE(first.problems[0].find("fewer bytes"), std::string::npos);
  EXPECT_GT(first.bytes_by_source.at("objectStore/origin"), 0u);
}

TEST_F(FetchEngineTest, NotFoundFallsBackAtOnce) {
  ScriptedSource peer("peer/a", "peer", base_ / "origin");
  peer.missing = true;
  ScriptedSource origin("http/origin", "http", base_ / "mirror");
  auto report = Fetch({&peer, &origin});
  ASSERT_TRUE(report);
  ExpectAllPublished();
  EXPECT_EQ(report->tier, "http");
  // One attempt per blob, no retries for a 404.
  EXPECT_LE(peer.calls.load(), 4 + static_cast<int>(options_.max_in_flight));
}

// A file is preallocated after its first range arrives, not before its first request: on
// tmpfs preallocating a 256 MiB file took 0.1-0.2 s, which delayed the first byte.
TEST_F(FetchEngineTest, AFileIsNotPreallocatedBeforeARangeOfItArrives) {
  if (IsMemoryFilesystem(base_)) GTEST_SKIP() << "the store never preallocates on tmpfs";
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "origin");
  origin.missing = true;
  auto result = Fetch({&origin});
  ASSERT_FALSE(result);
  EXPECT_GT(origin.calls.load(), 0);
  // The stagings stay for a resume, and none holds a block: no range of any file arrived.
  std::size_t partials = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(store_->layout().TemporaryDirectory())) {
    if (entry.path().extension() != ".partial") continue;
    ++partials;
    struct stat info {};
    ASSERT_EQ(::stat(entry.path().c_str(), &info), 0);
    EXPECT_EQ(info.st_blocks, 0) << entry.path();
  }
  EXPECT_GT(partials, 0u);
}

TEST_F(FetchEngineTest, StalledSourceHitsTheRangeDeadlineThenFallsBack) {
  ScriptedSource stalled("http/slow", "http", base_ / "origin");
  stalled.stall = true;
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "mirror");
  const auto start = std::chrono::steady_clock::now();
  auto report = Fetch({&stalled, &origin});
  ASSERT_TRUE(report) << report.error().ToString();
  ExpectAllPublished();
  // Deadline exceeded is retryable: at most attempts_per_source rounds of the deadline.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_NE(registry_.ExposeText().find("kind=\"deadline_exceeded\""), std::string::npos);
}

TEST_F(FetchEngineTest, RetryableErrorsAreRetriedOnTheSameSource) {
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "origin");
  origin.retryable_failures_left = 2;
  auto report = Fetch({&origin});
  ASSERT_TRUE(report) << report.error().ToString();
  ExpectAllPublished();
  EXPECT_EQ(report->tier, "objectStore");
}

TEST_F(FetchEngineTest, NoSourceLeftFailsAndKeepsNothingPublished) {
  ScriptedSource peer("peer/a", "peer", base_ / "origin");
  peer.missing = true;
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "origin");
  origin.missing = true;
  FetchReport report;
  auto result = Fetch({&peer, &origin}, &report);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message().find("no source left"), std::string::npos)
      << result.error().ToString();
  EXPECT_FALSE(report.ready);
  EXPECT_FALSE(store_->FindRevision(request_.revision_digest));
}

TEST_F(FetchEngineTest, CancelledFetchResumesWithoutRefetchingWhatLanded) {
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "origin", 1);
  origin.delay_ms = 20;
  request_.sources = {&origin};
  core::CancellationToken cancel;
  std::jthread canceller([&] {
    while (origin.bytes_served.load() < 3 * kRange)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    cancel.Cancel();
  });
  auto first = engine_->Fetch(request_, cancel);
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().code(), core::ErrorCode::kCancelled);
  const std::uint64_t landed = origin.bytes_served.load();
  EXPECT_FALSE(std::filesystem::is_empty(store_->layout().TemporaryDirectory()));

  // A new process: the store is reopened from disk. Files fetch side by side, so a small one
  // may have been published before the cancel.
  OpenStore();
  std::uint64_t published = 0;
  for (const core::Sha256Bytes& blob : store_->ListBlobs()) {
    published += std::filesystem::file_size(store_->FindVerifiedBlob(blob)->path);
  }
  ScriptedSource again("objectStore/origin", "objectStore", base_ / "origin");
  auto second = Fetch({&again});
  ASSERT_TRUE(second) << second.error().ToString();
  ExpectAllPublished();
  EXPECT_GT(second->resumed_bytes, 0u);
  EXPECT_EQ(second->fetched_bytes + second->resumed_bytes + published, UniqueBytes());
  // Only ranges that were in flight at the cancel are fetched twice.
  EXPECT_LE(UniqueBytes() - second->resumed_bytes, UniqueBytes() - landed + kRange);
}

TEST_F(FetchEngineTest, ACorruptResumedStagingIsDiscardedAndRefetchedWithoutBlamingTheSource) {
  // One file of six ranges; three are on disk from an interrupted staging, one byte of them
  // rotted. The object store is the only source: blaming it would leave no source at all.
  request_.files.resize(1);
  const FetchFile& file = request_.files[0];
  CaptureLog();
  LeaveInterruptedStaging(/*ranges=*/3, /*corrupt=*/true);
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "origin");
  auto report = Fetch({&origin});
  ASSERT_TRUE(report) << report.error().ToString();
  ExpectAllPublished();

  EXPECT_TRUE(health_.MayServe("objectStore/origin", file.sha256))
      << "a good source must not be barred for bytes that rotted on this disk";
  EXPECT_EQ(health_.quarantines(), 0u);
  const FileReport& staged = report->files[0];
  EXPECT_EQ(staged.restarts, 1u);
  EXPECT_EQ(staged.resumed_bytes_discarded, 3 * kRange);
  EXPECT_EQ(staged.resumed_bytes, 0u);
  EXPECT_TRUE(staged.source_failures.empty());
  ASSERT_EQ(staged.problems.size(), 1u);
  EXPECT_NE(staged.problems[0].find("resumed from an earlier staging"), std::string::npos)
      << staged.problems[0];
  EXPECT_EQ(report->resumed_bytes, 0u);
  EXPECT_EQ(report->resumed_bytes_discarded, 3 * kRange);
  // The first pass fetched the three missing ranges; the second, from byte 0, the whole file.
  EXPECT_EQ(origin.bytes_served.load(), (file.size - 3 * kRange) + file.size);
  EXPECT_EQ(staged.bytes_by_source.at("objectStore/origin"), file.size);
  EXPECT_EQ(report->fetched_bytes, file.size);
  // The rotted staging is kept in the store's quarantine for the operator.
  EXPECT_FALSE(std::filesystem::is_empty(store_->layout().QuarantineDirectory()));

  const std::string exposition = registry_.ExposeText();
  EXPECT_NE(exposition.find("modelplane_fetch_resumed_bytes_discarded_total " +
                            std::to_string(3 * kRange)),
            std::string::npos)
      << exposition;
  EXPECT_EQ(exposition.find("modelplane_fetch_quarantines_total{"), std::string::npos);
  const std::string log = log_.str();
  EXPECT_NE(log.find("event=resumed_bytes_discarded path=" + file.path +
                     " sha256=" + core::FormatDigest(file.sha256)),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("resumed_bytes=" + std::to_string(3 * kRange)), std::string::npos) << log;
  EXPECT_EQ(log.find("event=bad_bytes_quarantined"), std::string::npos) << log;
}

TEST_F(FetchEngineTest, AResumedFileThatMismatchesAgainFromTheStartBlamesItsSource) {
  // The resumed ranges are good; the shared filesystem serves flipped bits. The first mismatch
  // blames no one and starts over from byte 0; the second is the shared filesystem's alone, and
  // the object store serves the file.
  request_.files.resize(1);
  const FetchFile& file = request_.files[0];
  LeaveInterruptedStaging(/*ranges=*/3, /*corrupt=*/false);
  ScriptedSource shared("sharedFilesystem/nfs", "sharedFilesystem", base_ / "origin");
  shared.flip_bits = true;
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "mirror");
  auto report = Fetch({&shared, &origin});
  ASSERT_TRUE(report) << report.error().ToString();
  ExpectAllPublished();

  EXPECT_FALSE(health_.MayServe("sharedFilesystem/nfs", file.sha256));
  EXPECT_TRUE(health_.MayServe("objectStore/origin", file.sha256));
  EXPECT_EQ(health_.quarantines(), 1u);
  const FileReport& staged = report->files[0];
  EXPECT_EQ(staged.restarts, 2u);
  EXPECT_EQ(staged.resumed_bytes_discarded, 3 * kRange);
  ASSERT_EQ(staged.source_failures.size(), 1u);
  EXPECT_EQ(staged.source_failures[0].source, "sharedFilesystem/nfs");
  EXPECT_EQ(staged.source_failures[0].code, core::ErrorCode::kDataLoss);
  EXPECT_EQ(staged.tier, "objectStore");
  EXPECT_EQ(shared.bytes_served.load(), (file.size - 3 * kRange) + file.size);
  EXPECT_EQ(origin.bytes_served.load(), file.size);
  EXPECT_NE(
      registry_.ExposeText().find("modelplane_fetch_quarantines_total{tier=\"sharedFilesystem\""),
      std::string::npos);
}

TEST_F(FetchEngineTest, AResumedFileWhoseOnlySourceServesBadBytesFailsAfterOneFreshRefetch) {
  request_.files.resize(1);
  const FetchFile& file = request_.files[0];
  LeaveInterruptedStaging(/*ranges=*/2, /*corrupt=*/false);
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "origin");
  origin.flip_bits = true;
  FetchReport report;
  auto result = Fetch({&origin}, &report);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message().find("no source left"), std::string::npos)
      << result.error().ToString();
  EXPECT_FALSE(health_.MayServe("objectStore/origin", file.sha256));
  EXPECT_EQ(report.files[0].restarts, 2u);
  EXPECT_EQ(report.files[0].resumed_bytes_discarded, 2 * kRange);
  // Once for the missing ranges, once from byte 0: never a third time.
  EXPECT_EQ(origin.bytes_served.load(), (file.size - 2 * kRange) + file.size);
  EXPECT_FALSE(store_->FindRevision(request_.revision_digest));
}

TEST_F(FetchEngineTest, CapacityTooSmallFailsCleanlyBeforeWriting) {
  OpenStore(/*capacity=*/2 * kRange);
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "origin");
  auto result = Fetch({&origin});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), core::ErrorCode::kResourceExhausted);
  EXPECT_TRUE(std::filesystem::is_empty(store_->layout().BlobDirectory()));
  EXPECT_TRUE(std::filesystem::is_empty(store_->layout().TemporaryDirectory()));
  EXPECT_EQ(store_->Usage().reserved_bytes, 0u);
}

TEST_F(FetchEngineTest, FullFilesystemFailsCleanlyWithNothingPartialPublished) {
  const auto mount_point = base_ / "small-disk";
  std::filesystem::create_directories(mount_point);
  if (::geteuid() != 0 || ::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=256k") != 0) {
    GTEST_SKIP() << "needs root to mount a 256 KiB tmpfs (" << std::system_category().message(errno)
                 << ")";
  }
  struct Unmount {
    std::filesystem::path path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{mount_point};
  // The ledger is told the disk is large, so the write itself runs into ENOSPC.
  OpenStore(/*capacity=*/1ull << 30, mount_point / "cache");
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "origin");
  auto result = Fetch({&origin});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), core::ErrorCode::kResourceExhausted)
      << result.error().ToString();
  EXPECT_FALSE(store_->FindRevision(request_.revision_digest));
  EXPECT_TRUE(std::filesystem::is_empty(store_->layout().TemporaryDirectory()));
  for (const core::Sha256Bytes& blob : store_->ListBlobs()) {
    EXPECT_TRUE(store_->VerifyBlob(blob)->ok);  // whatever did publish is whole
  }
  engine_.reset();
  store_.reset();
}

TEST_F(FetchEngineTest, PathsThatEscapeAreRejectedBeforeAnyRead) {
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "origin");
  for (const char* path : {"../outside", "/etc/passwd", "a/../../b"}) {
    request_.files = {{.path = path, .size = 1, .sha256 = core::Sha256Of("x")}};
    auto result = Fetch({&origin});
    ASSERT_FALSE(result) << path;
    EXPECT_EQ(result.error().code(), core::ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(origin.calls.load(), 0);
}

TEST_F(FetchEngineTest, MemoryStaysWithinTheBufferPoolForManyRanges) {
  AddFile("big.safetensors", 64 * kRange + 5, 9);
  ScriptedSource origin("objectStore/origin", "objectStore", base_ / "origin", 8);
  auto report = Fetch({&origin});
  ASSERT_TRUE(report);
  EXPECT_LE(engine_->buffer_stats().high_water, engine_->buffer_stats().buffers);
  EXPECT_LE(report->buffer_high_water_bytes, options_.buffer_pool_bytes);
  ExpectAllPublished();
}

}  // namespace
}  // namespace modelplane::agent
