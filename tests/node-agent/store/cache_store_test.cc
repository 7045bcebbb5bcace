#include "node-agent/store/cache_store.h"

#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <system_error>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/digest/sha256.h"
#include "node-agent/store/revision_view.h"
#include "node-agent/store/store_files.h"

namespace modelplane::agent {
namespace {

constexpr std::uint64_t kRange = 64 * 1024;

class CacheStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("cache-store-test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
  }
  // RemoveTree: views have read-only folders, which a non-root owner cannot empty as they are.
  void TearDown() override { RemoveTree(root_); }

  std::unique_ptr<CacheStore> OpenStore(std::uint64_t capacity = 0) {
    auto store = CacheStore::Open({.root = root_, .capacity_bytes = capacity, .headroom_bytes = 0});
    EXPECT_TRUE(store.has_value()) << store.error().ToString();
    return store ? std::move(*store) : nullptr;
  }

  static std::string RandomBytes(std::size_t size, unsigned seed) {
    std::mt19937 random(seed);
    std::string bytes(size, '\0');
    for (char& c : bytes) c = static_cast<char>(random());
    return bytes;
  }

  // Stages `content` range by range through the public API, as the fetch engine does.
  static core::Status Stage(CacheStore& store, const std::string& content,
                            core::Sha256Bytes claimed) {
    auto partial = store.BeginBlob(claimed, content.size(), kRange);
    if (!partial) return std::unexpected(partial.error());
    auto hasher = core::Sha256::Create();
    for (std::size_t index = 0; index < (*partial)->range_count(); ++index) {
      const std::uint64_t offset = (*partial)->RangeOffset(index);
      const std::uint64_t length = (*partial)->RangeLength(index);
      void* memory = std::aligned_alloc(4096, kRange);
      std::memcpy(memory, content.data() + offset, length);
      std::span<const std::byte> data(static_cast<std::byte*>(memory), length);
      auto written = (*partial)->WriteRange(index, data, kRange);
      std::free(memory);
      if (!written) return written;
      if (auto marked = (*partial)->MarkRangeDone(index); !marked) return marked;
      hasher->Update(std::string_view(content).substr(offset, length));
    }
    return store.PublishBlob(std::move(*partial), hasher->Finish());
  }

  std::filesystem::path root_;
};

TEST_F(CacheStoreTest, PublishedBlobMatchesItsNameAndIsReadOnly) {
  auto store = OpenStore();
  const std::string content = RandomBytes(3 * kRange + 123, 1);
  const auto digest = core::Sha256Of(content);
  ASSERT_TRUE(Stage(*store, content, digest));
  auto blob = store->FindVerifiedBlob(digest);
  ASSERT_TRUE(blob);
  EXPECT_EQ(blob->size, content.size());
  EXPECT_EQ(*core::Sha256OfFile(blob->path.string()), digest);
  struct stat info {};
  ASSERT_EQ(::stat(blob->path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0444u);
  EXPECT_TRUE(std::filesystem::is_empty(store->layout().TemporaryDirectory()));
  EXPECT_EQ(store->Usage().used_bytes, content.size());
  EXPECT_EQ(store->Usage().reserved_bytes, 0u);
  auto again = store->BeginBlob(digest, content.size(), kRange);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), core::ErrorCode::kAlreadyExists);
}

TEST_F(CacheStoreTest, MismatchedBytesGoToQuarantineNotToBlobs) {
  auto store = OpenStore();
  const std::string content = RandomBytes(kRange + 7, 2);
  const auto claimed = core::Sha256Of("something else");
  auto staged = Stage(*store, content, claimed);
  ASSERT_FALSE(staged);
  EXPECT_EQ(staged.error().code(), core::ErrorCode::kDataLoss);
  // The message reaches status: the claimed digest, never the one of what was read.
  EXPECT_NE(staged.error().message().find(core::FormatDigest(claimed)), std::string::npos);
  const std::string read_digest = core::FormatDigest(core::Sha256Of(content));
  EXPECT_EQ(staged.error().message().find(read_digest.substr(7)), std::string::npos)
      << staged.error().message();
  EXPECT_FALSE(store->HasBlob(claimed));
  EXPECT_TRUE(std::filesystem::is_empty(store->layout().BlobDirectory()));
  EXPECT_FALSE(std::filesystem::is_empty(store->layout().QuarantineDirectory()));
  EXPECT_EQ(store->Usage().reserved_bytes, 0u);
}

// On tmpfs, preallocating a file allocates the pages its writes would allocate anyway, all
// before the first write: the store leaves it to the writes, and the bytes stay reserved in
// the ledger until the blob is published.
TEST_F(CacheStoreTest, StagingOnAMemoryFilesystemIsNotPreallocated) {
  std::filesystem::create_directories(root_);
  if (::geteuid() != 0 || ::mount("tmpfs", root_.c_str(), "tmpfs", 0, "size=16m") != 0) {
    GTEST_SKIP() << "needs root to mount a tmpfs (" << std::system_category().message(errno) << ")";
  }
  struct Unmount {
    std::filesystem::path path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{root_};
  ASSERT_TRUE(IsMemoryFilesystem(root_));
  auto store = OpenStore();
  ASSERT_TRUE(store);
  const std::string content = RandomBytes(4 * kRange + 123, 7);
  const core::Sha256Bytes digest = core::Sha256Of(content);
  {
    auto partial = store->BeginBlob(digest, content.size(), kRange);
    ASSERT_TRUE(partial) << partial.error().ToString();
    ASSERT_TRUE((*partial)->Preallocate());
    struct stat info {};
    ASSERT_EQ(::stat((*partial)->path().c_str(), &info), 0);
    EXPECT_EQ(info.st_blocks, 0);
    EXPECT_EQ(store->Usage().reserved_bytes, content.size());
    store->AbandonBlob(std::move(*partial));
  }
  ASSERT_TRUE(Stage(*store, content, digest));
  EXPECT_EQ(store->Usage().reserved_bytes, 0u);
  EXPECT_EQ(store->Usage().used_bytes, content.size());
  EXPECT_TRUE(store->VerifyBlob(digest)->ok);
  store.reset();
}

TEST_F(CacheStoreTest, SecondOpenOfTheSameRootIsRefused) {
  auto first = OpenStore();
  auto second = CacheStore::Open({.root = root_});
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code(), core::ErrorCode::kConflict);
  first.reset();
  EXPECT_TRUE(CacheStore::Open({.root = root_}));
}

TEST_F(CacheStoreTest, ReservationsCannotOvercommitCapacity) {
  auto store = OpenStore(/*capacity=*/10 * kRange);
  auto first = store->BeginBlob(core::Sha256Of("a"), 6 * kRange, kRange);
  ASSERT_TRUE(first);
  auto second = store->BeginBlob(core::Sha256Of("b"), 6 * kRange, kRange);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code(), core::ErrorCode::kResourceExhausted);
  EXPECT_NE(second.error().message().find("reserved"), std::string::npos);
  store->AbandonBlob(std::move(*first));
  EXPECT_EQ(store->Usage().reserved_bytes, 0u);
  auto third = store->BeginBlob(core::Sha256Of("b"), 6 * kRange, kRange);
  EXPECT_TRUE(third);
  store->AbandonBlob(std::move(*third));
}

TEST_F(CacheStoreTest, ConcurrentStagingOfOneBlobIsAConflict) {
  auto store = OpenStore();
  auto first = store->BeginBlob(core::Sha256Of("a"), kRange, kRange);
  ASSERT_TRUE(first);
  auto second = store->BeginBlob(core::Sha256Of("a"), kRange, kRange);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code(), core::ErrorCode::kConflict);
  EXPECT_TRUE(second.error().retryable());
  store->AbandonBlob(std::move(*first));
}

TEST_F(CacheStoreTest, SuspendedStagingResumesWithItsProgressAfterReopen) {
  const std::string content = RandomBytes(4 * kRange, 3);
  const auto digest = core::Sha256Of(content);
  {
    auto store = OpenStore();
    auto partial = store->BeginBlob(digest, content.size(), kRange);
    ASSERT_TRUE(partial);
    void* memory = std::aligned_alloc(4096, kRange);
    for (std::size_t index : {0u, 2u}) {
      std::memcpy(memory, content.data() + index * kRange, kRange);
      ASSERT_TRUE((*partial)->WriteRange(
          index, std::span<const std::byte>(static_cast<std::byte*>(memory), kRange), kRange));
      ASSERT_TRUE((*partial)->MarkRangeDone(index));
    }
    // Range 3 written but not recorded: as if the process died between the two.
    std::memcpy(memory, content.data() + 3 * kRange, kRange);
    ASSERT_TRUE((*partial)->WriteRange(
        3, std::span<const std::byte>(static_cast<std::byte*>(memory), kRange), kRange));
    std::free(memory);
    partial->reset();  // closed without Suspend or Abandon: the files stay, as after kill -9
  }
  auto store = OpenStore();
  EXPECT_EQ(store->recovery().resumable_partials, 1u);
  EXPECT_EQ(store->Usage().reserved_bytes, content.size());
  auto partial = store->BeginBlob(digest, content.size(), kRange);
  ASSERT_TRUE(partial);
  EXPECT_EQ((*partial)->resumed_ranges(), 2u);
  EXPECT_TRUE((*partial)->IsRangeDone(0));
  EXPECT_FALSE((*partial)->IsRangeDone(1));
  EXPECT_TRUE((*partial)->IsRangeDone(2));
  EXPECT_FALSE((*partial)->IsRangeDone(3));
  std::string back(kRange, '\0');
  ASSERT_TRUE((*partial)->ReadBack(2 * kRange, std::as_writable_bytes(std::span(back))));
  EXPECT_EQ(back, content.substr(2 * kRange, kRange));
  store->AbandonBlob(std::move(*partial));
}

TEST_F(CacheStoreTest, ProgressForADifferentRangeSizeStartsOver) {
  const auto digest = core::Sha256Of("x");
  {
    auto store = OpenStore();
    auto partial = store->BeginBlob(digest, 4 * kRange, kRange);
    ASSERT_TRUE(partial);
    ASSERT_TRUE((*partial)->MarkRangeDone(0));
    store->SuspendBlob(std::move(*partial));
  }
  auto store = OpenStore();
  auto partial = store->BeginBlob(digest, 4 * kRange, 2 * kRange);
  ASSERT_TRUE(partial);
  EXPECT_EQ((*partial)->resumed_ranges(), 0u);
  store->AbandonBlob(std::move(*partial));
}

TEST_F(CacheStoreTest, RevisionIsReadyOnlyWhileAllItsBlobsArePresent) {
  const std::string a = RandomBytes(kRange + 1, 4);
  const std::string b = RandomBytes(100, 5);
  RevisionManifest manifest{.revision_digest = core::Sha256Of("revision"),
                            .name = "default/model",
                            .files = {{"model.safetensors", a.size(), core::Sha256Of(a)},
                                      {"config.json", b.size(), core::Sha256Of(b)}}};
  {
    auto store = OpenStore();
    ASSERT_TRUE(Stage(*store, a, core::Sha256Of(a)));
    auto early = store->PublishRevision(manifest);
    ASSERT_FALSE(early);  // config.json is not there yet
    ASSERT_TRUE(Stage(*store, b, core::Sha256Of(b)));
    ASSERT_TRUE(store->PublishRevision(manifest));
    auto found = store->FindRevision(manifest.revision_digest);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->files, manifest.files);
    // The folder view opens like the model's own folder.
    const auto view = store->layout().RevisionView(manifest.revision_digest);
    std::ifstream weights(view / "model.safetensors", std::ios::binary);
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(weights)), {}), a);
    EXPECT_TRUE(std::filesystem::exists(view / "config.json"));
  }
  // A blob vanishes behind the store's back: the revision must not come back as ready.
  std::filesystem::remove(StoreLayout(root_).BlobPath(core::Sha256Of(b)));
  auto store = OpenStore();
  EXPECT_EQ(store->recovery().dropped_revisions, 1u);
  EXPECT_FALSE(store->FindRevision(manifest.revision_digest));
  EXPECT_FALSE(std::filesystem::exists(store->layout().RevisionView(manifest.revision_digest)));
}

// Views are what the CSI plugin bind-mounts into containers: regular files (the blobs' own
// inodes, not symlinks that would dangle there), world-readable, read-only.
TEST_F(CacheStoreTest, ViewIsHardLinksToTheBlobsWithReadOnlyModes) {
  const std::string a = RandomBytes(kRange + 1, 10);
  const std::string b = RandomBytes(300, 11);
  const RevisionManifest manifest{.revision_digest = core::Sha256Of("view"),
                                  .files = {{"model.safetensors", a.size(), core::Sha256Of(a)},
                                            {"tokenizer/vocab.json", b.size(), core::Sha256Of(b)}}};
  auto store = OpenStore();
  ASSERT_TRUE(Stage(*store, a, core::Sha256Of(a)));
  ASSERT_TRUE(Stage(*store, b, core::Sha256Of(b)));
  ASSERT_TRUE(store->PublishRevision(manifest));
  const auto view = store->layout().RevisionView(manifest.revision_digest);
  for (const ManifestFile& file : manifest.files) {
    struct stat link {};
    struct stat blob {};
    ASSERT_EQ(::lstat((view / file.path).c_str(), &link), 0) << file.path;
    ASSERT_EQ(::stat(store->layout().BlobPath(file.sha256).c_str(), &blob), 0);
    EXPECT_TRUE(S_ISREG(link.st_mode)) << file.path;
    EXPECT_EQ(link.st_ino, blob.st_ino) << file.path;
    EXPECT_EQ(link.st_mode & 07777, 0444u) << file.path;
  }
  for (const auto& folder : {view, view / "tokenizer"}) {
    struct stat info {};
    ASSERT_EQ(::lstat(folder.c_str(), &info), 0);
    EXPECT_TRUE(S_ISDIR(info.st_mode));
    EXPECT_EQ(info.st_mode & 07777, 0555u) << folder;
  }
  EXPECT_TRUE(ViewMatches(store->layout(), manifest));
  std::ifstream vocab(view / "tokenizer/vocab.json", std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(vocab)), {}), b);
}

// A view may be mounted into pods: reopening the store or publishing the revision again must
// keep it (same folder inode), while a view of the older symlink layout is rebuilt.
TEST_F(CacheStoreTest, RightViewIsKeptAndSymlinkViewIsRebuilt) {
  const std::string content = RandomBytes(2000, 12);
  const RevisionManifest manifest{.revision_digest = core::Sha256Of("kept"),
                                  .files = {{"w", content.size(), core::Sha256Of(content)}}};
  const StoreLayout layout(root_);
  const auto view = layout.RevisionView(manifest.revision_digest);
  auto inode = [](const std::filesystem::path& path) {
    struct stat info {};
    return ::lstat(path.c_str(), &info) == 0 ? info.st_ino : 0;
  };
  ino_t first = 0;
  {
    auto store = OpenStore();
    ASSERT_TRUE(Stage(*store, content, core::Sha256Of(content)));
    ASSERT_TRUE(store->PublishRevision(manifest));
    first = inode(view);
    ASSERT_NE(first, 0u);
    ASSERT_TRUE(store->PublishRevision(manifest));
    EXPECT_EQ(inode(view), first);
  }
  {
    auto store = OpenStore();
    EXPECT_EQ(inode(view), first);
  }
  // The layout before hard links: models/<hex>/w -> blobs/sha256/<hex>.
  RemoveTree(view);
  std::filesystem::create_directories(view);
  std::filesystem::create_symlink(layout.BlobPath(core::Sha256Of(content)), view / "w");
  EXPECT_FALSE(ViewMatches(layout, manifest));
  auto store = OpenStore();
  EXPECT_TRUE(ViewMatches(layout, manifest));
  EXPECT_FALSE(std::filesystem::is_symlink(view / "w"));
}

// A crash while a view was being built leaves tmp/view-<hex> with files and read-only folders in
// it; opening the store removes it (std::filesystem::remove alone throws on a non-empty folder).
TEST_F(CacheStoreTest, LeftoverViewFolderIsRemovedOnOpen) {
  { auto store = OpenStore(); }
  const StoreLayout layout(root_);
  const auto leftover = layout.TemporaryDirectory() / ("view-" + std::string(64, 'c'));
  std::filesystem::create_directories(leftover / "sub");
  std::ofstream(leftover / "sub" / "file") << "x";
  ::chmod((leftover / "sub").c_str(), 0555);
  auto store = OpenStore();
  EXPECT_FALSE(std::filesystem::exists(leftover));
  EXPECT_TRUE(std::filesystem::is_empty(layout.TemporaryDirectory()));
}

TEST_F(CacheStoreTest, StrayFilesAreMovedAsideOrRemovedOnOpen) {
  { auto store = OpenStore(); }
  const StoreLayout layout(root_);
  std::ofstream(layout.BlobDirectory() / "not-a-digest") << "x";
  std::ofstream(layout.RevisionDirectory() / ".abc.json.0123.tmp") << "{";
  std::ofstream(layout.RevisionDirectory() / (std::string(64, 'a') + ".json")) << "{not json";
  std::ofstream(layout.TemporaryDirectory() / (std::string(64, 'b') + ".partial")) << "no progress";
  auto store = OpenStore();
  EXPECT_FALSE(std::filesystem::exists(layout.BlobDirectory() / "not-a-digest"));
  EXPECT_TRUE(std::filesystem::is_empty(layout.RevisionDirectory()));
  EXPECT_TRUE(std::filesystem::is_empty(layout.TemporaryDirectory()));
  EXPECT_EQ(store->recovery().dropped_partials, 1u);
  EXPECT_EQ(store->recovery().dropped_revisions, 1u);
}

TEST_F(CacheStoreTest, GarbageCollectionKeepsWhatManifestsName) {
  auto store = OpenStore();
  const std::string kept = RandomBytes(1000, 6);
  const std::string dropped = RandomBytes(2000, 7);
  ASSERT_TRUE(Stage(*store, kept, core::Sha256Of(kept)));
  ASSERT_TRUE(Stage(*store, dropped, core::Sha256Of(dropped)));
  ASSERT_TRUE(store->PublishRevision({.revision_digest = core::Sha256Of("r"),
                                      .files = {{"a", kept.size(), core::Sha256Of(kept)}}}));
  auto report = store->CollectGarbage();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->blobs_removed, 1u);
  EXPECT_EQ(report->bytes_freed, dropped.size());
  EXPECT_TRUE(store->HasBlob(core::Sha256Of(kept)));
  EXPECT_FALSE(store->HasBlob(core::Sha256Of(dropped)));
  EXPECT_EQ(store->Usage().used_bytes, kept.size());
  ASSERT_TRUE(store->RemoveRevision(core::Sha256Of("r")));
  ASSERT_TRUE(store->CollectGarbage());
  EXPECT_FALSE(store->HasBlob(core::Sha256Of(kept)));
}

TEST_F(CacheStoreTest, VerifyFindsBitRotAndDropsTheRevision) {
  auto store = OpenStore();
  const std::string content = RandomBytes(5000, 8);
  const auto digest = core::Sha256Of(content);
  ASSERT_TRUE(Stage(*store, content, digest));
  ASSERT_TRUE(store->PublishRevision(
      {.revision_digest = core::Sha256Of("r"), .files = {{"w", content.size(), digest}}}));
  auto clean = store->VerifyBlob(digest);
  ASSERT_TRUE(clean);
  EXPECT_TRUE(clean->ok);
  {
    const auto path = store->layout().BlobPath(digest);
    ::chmod(path.c_str(), 0644);
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(100);
    file.put(static_cast<char>(content[100] ^ 0x01));
  }
  auto rotten = store->VerifyBlob(digest);
  ASSERT_TRUE(rotten);
  EXPECT_FALSE(rotten->ok);
  EXPECT_FALSE(store->HasBlob(digest));
  EXPECT_FALSE(store->FindRevision(core::Sha256Of("r")));
  EXPECT_FALSE(std::filesystem::is_empty(store->layout().QuarantineDirectory()));
}

TEST_F(CacheStoreTest, RevisionsAreReadFromDiskOnceAndKeptInStepWithIt) {
  const std::string content = RandomBytes(3000, 9);
  const auto digest = core::Sha256Of(content);
  const RevisionManifest first{.revision_digest = core::Sha256Of("first"),
                               .files = {{"w", content.size(), digest}}};
  const RevisionManifest second{.revision_digest = core::Sha256Of("second"),
                                .files = {{"copy/w", content.size(), digest}}};
  {
    auto store = OpenStore();
    ASSERT_TRUE(Stage(*store, content, digest));
    ASSERT_TRUE(store->PublishRevision(first));
    ASSERT_TRUE(store->PublishRevision(second));
    EXPECT_EQ(store->ListRevisions().size(), 2u);
    ASSERT_TRUE(store->RemoveRevision(first.revision_digest));
    EXPECT_FALSE(store->FindRevision(first.revision_digest));
    ASSERT_EQ(store->ListRevisions().size(), 1u);
    EXPECT_EQ(store->ListRevisions()[0].files, second.files);
  }
  // A new process reads what is on disk: the same answer.
  auto store = OpenStore();
  EXPECT_EQ(store->recovery().revisions, 1u);
  EXPECT_FALSE(store->FindRevision(first.revision_digest));
  auto found = store->FindRevision(second.revision_digest);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->files, second.files);
  // The control loop asks on every pass; the answer comes from memory, not from the file.
  std::ofstream(store->layout().RevisionPath(second.revision_digest), std::ios::trunc) << "{";
  EXPECT_TRUE(store->FindRevision(second.revision_digest));
}

TEST(RevisionManifestTest, RoundTripsAndRejectsHostileContent) {
  RevisionManifest manifest{.revision_digest = core::Sha256Of("r"),
                            .name = "ns/name",
                            .files = {{"dir/model.safetensors", 10, core::Sha256Of("x")}},
                            .published_unix_seconds = 1234};
  auto parsed = ParseManifest(SerializeManifest(manifest));
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(*parsed, manifest);
  for (const char* path : {"../escape", "/abs", "a//b", "a/./b", ""}) {
    auto bad = manifest;
    bad.files[0].path = path;
    EXPECT_FALSE(ParseManifest(SerializeManifest(bad))) << path;
  }
  EXPECT_FALSE(ParseManifest("[]"));
  EXPECT_FALSE(ParseManifest("{\"revisionDigest\":\"sha256:zz\",\"files\":[]}"));
}

TEST(RelativePathTest, RejectsTraversalAndAcceptsUnicode) {
  EXPECT_TRUE(ValidateRelativePath("weights/model-00001-of-00002.safetensors"));
  EXPECT_TRUE(ValidateRelativePath("modèle/权重 1.safetensors"));
  EXPECT_FALSE(ValidateRelativePath("../etc/passwd"));
  EXPECT_FALSE(ValidateRelativePath("a/../../b"));
  EXPECT_FALSE(ValidateRelativePath("/etc/passwd"));
  EXPECT_FALSE(ValidateRelativePath("a\\b"));
  EXPECT_FALSE(ValidateRelativePath(std::string("a\0b", 3)));
  EXPECT_FALSE(ValidateRelativePath("\xff\xfe"));
}

}  // namespace
}  // namespace modelplane::agent

namespace modelplane::agent {
namespace {

class CacheStoreRemovalTest : public CacheStoreTest {
 protected:
  // Two revisions sharing one blob: r1 = {shared, only1}, r2 = {shared, only2}.
  void StageTwo(CacheStore& store) {
    for (const std::string* content : {&shared_, &only1_, &only2_}) {
      ASSERT_TRUE(Stage(store, *content, core::Sha256Of(*content)));
    }
    ASSERT_TRUE(store.PublishRevision({.revision_digest = r1_,
                                       .files = {{"s", shared_.size(), core::Sha256Of(shared_)},
                                                 {"a", only1_.size(), core::Sha256Of(only1_)}}}));
    ASSERT_TRUE(store.PublishRevision({.revision_digest = r2_,
                                       .files = {{"s", shared_.size(), core::Sha256Of(shared_)},
                                                 {"b", only2_.size(), core::Sha256Of(only2_)}}}));
  }
  std::set<core::Sha256Bytes> AllBlobs() const {
    return {core::Sha256Of(shared_), core::Sha256Of(only1_), core::Sha256Of(only2_)};
  }

  const std::string shared_ = RandomBytes(3000, 11);
  const std::string only1_ = RandomBytes(1000, 12);
  const std::string only2_ = RandomBytes(2000, 13);
  const core::Sha256Bytes r1_ = core::Sha256Of("r1");
  const core::Sha256Bytes r2_ = core::Sha256Of("r2");
};

// Leftovers of every kind where files belong, and files where folders belong: Open neither
// throws nor fails, and what it cannot use is gone (or quarantined) afterwards.
TEST_F(CacheStoreTest, RecoveryRemovesLeftoverFoldersWithoutThrowing) {
  { auto store = OpenStore(); }
  const StoreLayout layout(root_);
  auto non_empty_folder = [](const std::filesystem::path& path, bool read_only) {
    std::filesystem::create_directories(path / "inner");
    std::ofstream(path / "inner" / "file") << "x";
    if (read_only) {
      ::chmod((path / "inner").c_str(), 0555);
      ::chmod(path.c_str(), 0555);
    }
  };
  non_empty_folder(layout.RevisionDirectory() / (std::string(64, 'a') + ".json"), true);
  non_empty_folder(layout.RevisionDirectory() / "not-a-manifest", false);
  non_empty_folder(layout.BlobDirectory() / std::string(64, 'b'), false);
  non_empty_folder(layout.ModelDirectory() / "not-a-view", true);
  std::ofstream(layout.ModelDirectory() / std::string(64, 'c')) << "a file where a view belongs";
  non_empty_folder(layout.TemporaryDirectory() / (std::string(64, 'd') + ".partial"), false);
  non_empty_folder(layout.TemporaryDirectory() / (std::string(64, 'e') + ".progress"), false);
  for (int index = 0; index < 6; ++index) {
    non_empty_folder(layout.QuarantineDirectory() / ("old-" + std::to_string(index)), true);
  }
  std::unique_ptr<CacheStore> store;
  ASSERT_NO_THROW(store = OpenStore());
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(std::filesystem::is_empty(layout.RevisionDirectory()));
  EXPECT_TRUE(std::filesystem::is_empty(layout.BlobDirectory()));  // moved to quarantine
  EXPECT_TRUE(std::filesystem::is_empty(layout.ModelDirectory()));
  EXPECT_TRUE(std::filesystem::is_empty(layout.TemporaryDirectory()));
  EXPECT_EQ(store->recovery().dropped_revisions, 1u);
  EXPECT_EQ(store->recovery().blobs, 0u);
  // A staging still works in the repaired root.
  const std::string content = RandomBytes(5000, 9);
  EXPECT_TRUE(Stage(*store, content, core::Sha256Of(content)));
  ASSERT_TRUE(store->CollectGarbage());  // the quarantine's read-only folders go too
  EXPECT_TRUE(std::filesystem::is_empty(layout.QuarantineDirectory()));
}

TEST_F(CacheStoreRemovalTest, RemovesOnlyBlobsNoManifestNames) {
  auto store = OpenStore();
  StageTwo(*store);
  ASSERT_TRUE(store->RemoveRevision(r1_));
  EXPECT_FALSE(store->FindRevision(r1_));
  EXPECT_FALSE(std::filesystem::exists(store->layout().RevisionPath(r1_)));
  EXPECT_FALSE(std::filesystem::exists(store->layout().RevisionView(r1_)));
  auto removed = store->RemoveUnreferencedBlobs(AllBlobs());
  ASSERT_TRUE(removed) << removed.error().ToString();
  EXPECT_EQ(removed->blobs_removed, 1u);
  EXPECT_EQ(removed->bytes_freed, only1_.size());
  EXPECT_EQ(removed->kept_referenced, 2u);  // r2 still names the shared blob and its own
  EXPECT_TRUE(store->HasBlob(core::Sha256Of(shared_)));
  EXPECT_FALSE(store->HasBlob(core::Sha256Of(only1_)));
  EXPECT_FALSE(std::filesystem::exists(store->layout().BlobPath(core::Sha256Of(only1_))));
  EXPECT_EQ(store->Usage().used_bytes, shared_.size() + only2_.size());
  EXPECT_TRUE(store->FindRevision(r2_));
}

TEST_F(CacheStoreRemovalTest, AHoldKeepsBlobsUntilReleased) {
  auto store = OpenStore();
  StageTwo(*store);
  ASSERT_TRUE(store->RemoveRevision(r1_));
  ASSERT_TRUE(store->RemoveRevision(r2_));
  BlobHold hold = store->HoldBlobs({core::Sha256Of(only1_), core::Sha256Of(only1_)});
  auto removed = store->RemoveUnreferencedBlobs(AllBlobs());
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed->blobs_removed, 2u);
  EXPECT_TRUE(store->HasBlob(core::Sha256Of(only1_)));
  BlobHold moved = std::move(hold);
  moved.Release();
  removed = store->RemoveUnreferencedBlobs(AllBlobs());
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed->blobs_removed, 1u);
  EXPECT_EQ(store->Usage().used_bytes, 0u);
}

// before_each can pace or stop a removal, and a hold taken while it waited is honoured.
TEST_F(CacheStoreRemovalTest, RemovalChecksHoldsAgainAfterWaiting) {
  auto store = OpenStore();
  StageTwo(*store);
  ASSERT_TRUE(store->RemoveRevision(r1_));
  ASSERT_TRUE(store->RemoveRevision(r2_));
  std::optional<BlobHold> late;
  int calls = 0;
  const std::set<core::Sha256Bytes> blobs = AllBlobs();
  const std::vector<core::Sha256Bytes> all(blobs.begin(), blobs.end());
  auto removed = store->RemoveUnreferencedBlobs(blobs, [&](std::uint64_t) {
    if (++calls == 1) late = store->HoldBlobs(all);
    return true;
  });
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed->blobs_removed, 0u);
  EXPECT_EQ(store->ListBlobs().size(), 3u);
  late.reset();
  removed = store->RemoveUnreferencedBlobs(AllBlobs(), [&](std::uint64_t) { return false; });
  ASSERT_TRUE(removed);
  EXPECT_TRUE(removed->stopped);
  EXPECT_EQ(store->ListBlobs().size(), 3u);
}

TEST_F(CacheStoreRemovalTest, BytesToStageCountsOnlyWhatIsMissing) {
  auto store = OpenStore();
  StageTwo(*store);
  const std::string fresh = RandomBytes(777, 21);
  const std::vector<ManifestFile> files = {{"s", shared_.size(), core::Sha256Of(shared_)},
                                           {"n", fresh.size(), core::Sha256Of(fresh)},
                                           {"n2", fresh.size(), core::Sha256Of(fresh)}};
  EXPECT_EQ(store->BytesToStage(files), fresh.size());
}

}  // namespace
}  // namespace modelplane::agent
