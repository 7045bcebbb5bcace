// The evictor over a real store: the manifest goes (durably) before any blob, blobs another
// revision names stay, a mounted revision is skipped unless forced, a revision that became
// protected is skipped, and Stop ends a paced removal at a blob boundary.
#include "node-agent/eviction/evictor.h"

#include <condition_variable>
#include <thread>

#include <unistd.h>

#include <gtest/gtest.h>

#include "node-agent/store/revision_view.h"
#include "tests/node-agent/csi/staged_revision.h"

namespace modelplane::agent {
namespace {

// Claims as the CSI plugin would; records what the store looked like at claim and release.
class RecordingGuard final : public ViewGuard {
 public:
  explicit RecordingGuard(const StoreLayout& layout) : layout_(layout) {}
  std::optional<ViewClaim> ClaimUnmounted(const core::Sha256Bytes& digest) override {
    ++claims;
    if (mounted.contains(digest)) return std::nullopt;
    manifest_at_claim = std::filesystem::exists(layout_.RevisionPath(digest));
    return ViewClaim([this, digest] {
      manifest_at_release = std::filesystem::exists(layout_.RevisionPath(digest));
      view_at_release = std::filesystem::exists(layout_.RevisionView(digest));
      blob_at_release = std::filesystem::exists(layout_.BlobPath(core::Sha256Of(kOwn)));
    });
  }
  static constexpr std::string_view kOwn = "only in r1";
  std::set<core::Sha256Bytes> mounted;
  int claims = 0;
  bool manifest_at_claim = false;
  bool manifest_at_release = true;
  bool view_at_release = true;
  bool blob_at_release = false;

 private:
  const StoreLayout& layout_;
};

class EvictorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("evictor-test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    RemoveTree(root_);
    auto store = CacheStore::Open({.root = root_, .headroom_bytes = 0});
    ASSERT_TRUE(store) << store.error().ToString();
    store_ = std::move(*store);
    guard_ = std::make_unique<RecordingGuard>(store_->layout());
    ASSERT_TRUE(testing::StageRevision(
        *store_, {{"own", std::string(RecordingGuard::kOwn)}, {"shared", kShared}}, r1_, "ns/r1"));
    ASSERT_TRUE(
        testing::StageRevision(*store_, {{"shared", kShared}, {"b", "only in r2"}}, r2_, "ns/r2"));
  }
  void TearDown() override {
    evictor_.reset();
    store_.reset();
    RemoveTree(root_);
  }

  void MakeEvictor(std::uint64_t rate = 0) {
    evictor_ = std::make_unique<Evictor>(
        Evictor::Dependencies{
            .store = *store_,
            .clock = clock_,
            .view_guard = guard_.get(),
            .may_evict =
                [this](const core::Sha256Bytes& digest) { return !protected_.contains(digest); },
            .on_change =
                [this] {
                  std::lock_guard lock(mutex_);
                  ++changes_;
                  changed_.notify_all();
                }},
        Evictor::Options{.delete_bytes_per_second = rate});
  }
  EvictionOrder OrderFor(const core::Sha256Bytes& digest, bool force = false) {
    auto manifest = store_->FindRevision(digest);
    EvictionOrder order{.digest = digest, .reason = "watermark", .force = force};
    if (manifest) {
      for (const ManifestFile& file : manifest->files) order.blobs.insert(file.sha256);
    }
    return order;
  }
  std::vector<EvictionResult> WaitForResults(std::size_t count) {
    std::vector<EvictionResult> results;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (results.size() < count && std::chrono::steady_clock::now() < deadline) {
      for (EvictionResult& result : evictor_->TakeFinished()) results.push_back(std::move(result));
      std::unique_lock lock(mutex_);
      changed_.wait_for(lock, std::chrono::milliseconds(20));
    }
    return results;
  }

  static constexpr const char* kShared = "shared by both revisions";
  const core::Sha256Bytes r1_ = core::Sha256Of("r1");
  const core::Sha256Bytes r2_ = core::Sha256Of("r2");
  std::filesystem::path root_;
  std::unique_ptr<CacheStore> store_;
  std::unique_ptr<RecordingGuard> guard_;
  std::set<core::Sha256Bytes> protected_;
  core::SystemClock clock_;
  std::unique_ptr<Evictor> evictor_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int changes_ = 0;
};

TEST_F(EvictorTest, ManifestGoesBeforeTheBlobsAndSharedBlobsStay) {
  MakeEvictor();
  evictor_->Enqueue({OrderFor(r1_)});
  const auto results = WaitForResults(1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].evicted) << results[0].problem;
  EXPECT_EQ(results[0].bytes_freed, RecordingGuard::kOwn.size());
  // At claim time the manifest was there; when the claim went (after RemoveRevision, before
  // any blob) the manifest and the view were gone and the blob still there.
  EXPECT_TRUE(guard_->manifest_at_claim);
  EXPECT_FALSE(guard_->manifest_at_release);
  EXPECT_FALSE(guard_->view_at_release);
  EXPECT_TRUE(guard_->blob_at_release);
  EXPECT_FALSE(store_->FindRevision(r1_));
  EXPECT_FALSE(store_->HasBlob(core::Sha256Of(std::string(RecordingGuard::kOwn))));
  EXPECT_TRUE(store_->HasBlob(core::Sha256Of(std::string(kShared))));  // r2 names it
  EXPECT_TRUE(store_->FindRevision(r2_));
  EXPECT_TRUE(evictor_->Idle());
}

TEST_F(EvictorTest, AMountedRevisionIsSkippedUnlessForced) {
  guard_->mounted.insert(r1_);
  MakeEvictor();
  evictor_->Enqueue({OrderFor(r1_)});
  auto results = WaitForResults(1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].evicted);
  EXPECT_EQ(results[0].problem, "a pod has it mounted");
  EXPECT_TRUE(store_->FindRevision(r1_));
  evictor_->Enqueue({OrderFor(r1_, /*force=*/true)});
  results = WaitForResults(1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].evicted);
  EXPECT_FALSE(store_->FindRevision(r1_));
}

TEST_F(EvictorTest, ARevisionProtectedSinceThePlanIsSkipped) {
  protected_.insert(r1_);
  MakeEvictor();
  evictor_->Enqueue({OrderFor(r1_)});
  const auto results = WaitForResults(1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].evicted);
  EXPECT_EQ(guard_->claims, 0);
  EXPECT_TRUE(store_->FindRevision(r1_));
}

TEST_F(EvictorTest, QueuedTwiceRunsOnceAndReportsProgress) {
  MakeEvictor(/*rate=*/1);  // one byte per second: the first blob holds it for seconds
  evictor_->Enqueue({OrderFor(r1_), OrderFor(r1_)});
  evictor_->Enqueue({OrderFor(r1_)});
  const auto progress = evictor_->InProgress();
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_EQ(progress.begin()->second.reason, "watermark");
  // Stop ends the paced removal at a blob boundary: the manifest is gone, the blobs not yet.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::filesystem::exists(store_->layout().RevisionPath(r1_)) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_FALSE(std::filesystem::exists(store_->layout().RevisionPath(r1_)));
  evictor_->Stop();
  EXPECT_FALSE(store_->FindRevision(r1_));
  EXPECT_TRUE(store_->HasBlob(core::Sha256Of(std::string(RecordingGuard::kOwn))));
  // The next eviction finds that blob unreferenced and removes it.
  MakeEvictor();
  evictor_->Enqueue({{.blobs = {core::Sha256Of(std::string(RecordingGuard::kOwn))},
                      .reason = std::string(kEvictedUnreferenced)}});
  const auto results = WaitForResults(1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].evicted);
  EXPECT_FALSE(store_->HasBlob(core::Sha256Of(std::string(RecordingGuard::kOwn))));
}

}  // namespace
}  // namespace modelplane::agent
