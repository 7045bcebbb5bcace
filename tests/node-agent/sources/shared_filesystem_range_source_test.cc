#include "node-agent/sources/shared_filesystem_range_source.h"

#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "test_files.h"

namespace modelplane::agent {
namespace {

using core::ErrorCode;
using testing::AlignedBuffer;
using testing::PatternBytes;
using testing::TempFolder;

class SharedFilesystemTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    root_ = base_.path() + "/root";
    std::filesystem::create_directories(root_);
    base_.Write("outside/secret.bin", "secret bytes outside the root");
    content_ = PatternBytes(3 * 4096 + 100);
    base_.Write("root/models/shard.safetensors", content_);
    std::filesystem::create_symlink("../outside/secret.bin", root_ + "/escape-link");
    std::filesystem::create_symlink(base_.path() + "/outside", root_ + "/outside-dir");
    std::filesystem::create_symlink("models/shard.safetensors", root_ + "/inner-link");
    auto source = SharedFilesystemRangeSource::Create(
        {.name = "nfs", .root = root_, .force_component_walk = GetParam()});
    ASSERT_TRUE(source.has_value()) << source.error().ToString();
    source_ = std::move(*source);
  }

  core::Status Read(const std::string& path, std::uint64_t offset, std::span<std::byte> out) {
    return source_->ReadRange({.path = path}, offset, out, {});
  }

  TempFolder base_;
  std::string root_;
  std::string content_;
  std::unique_ptr<SharedFilesystemRangeSource> source_;
};

TEST_P(SharedFilesystemTest, NamesItsTier) {
  EXPECT_EQ(source_->tier(), "sharedFilesystem");
  EXPECT_EQ(source_->name(), "sharedFilesystem/nfs");
}

TEST_P(SharedFilesystemTest, AlignedRangesGoDirectAndTheUnalignedTailBuffered) {
  // The last range of the file: aligned start, unaligned length.
  AlignedBuffer last(4096 + 100);
  ASSERT_TRUE(Read("models/shard.safetensors", 2 * 4096, last.span()));
  EXPECT_EQ(last.str(), content_.substr(2 * 4096));
  if (source_->direct_bytes() == 0) {
    GTEST_SKIP() << "this filesystem refuses O_DIRECT; buffered reads were checked instead";
  }
  EXPECT_EQ(source_->direct_bytes(), 4096u);
  EXPECT_EQ(source_->buffered_bytes(), 100u);
}

TEST_P(SharedFilesystemTest, UnalignedRangesAreBufferedAndByteExact) {
  std::string buffer(777, '\0');
  const std::span<std::byte> out(reinterpret_cast<std::byte*>(buffer.data()), buffer.size());
  ASSERT_TRUE(Read("models/shard.safetensors", 1234, out));
  EXPECT_EQ(buffer, content_.substr(1234, 777));
  EXPECT_EQ(source_->direct_bytes(), 0u);
  EXPECT_EQ(source_->buffered_bytes(), 777u);
}

TEST_P(SharedFilesystemTest, ParallelRangesReassembleTheFile) {
  AlignedBuffer whole(content_.size());
  std::vector<std::jthread> threads;
  std::atomic<int> failures{0};
  for (std::size_t offset = 0; offset < content_.size(); offset += 4096) {
    threads.emplace_back([&, offset] {
      const std::size_t length = std::min<std::size_t>(4096, content_.size() - offset);
      if (!Read("models/shard.safetensors", offset, whole.span().subspan(offset, length))) {
        ++failures;
      }
    });
  }
  threads.clear();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(whole.str(), content_);
}

TEST_P(SharedFilesystemTest, ShortFileIsDataLoss) {
  AlignedBuffer past_end(8192);
  auto status = Read("models/shard.safetensors", 2 * 4096, past_end.span());
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), ErrorCode::kDataLoss);
}

TEST_P(SharedFilesystemTest, MissingFileIsNotFound) {
  AlignedBuffer out(10);
  auto status = Read("models/absent.safetensors", 0, out.span());
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), ErrorCode::kNotFound);
}

TEST_P(SharedFilesystemTest, DotDotAndAbsolutePathsAreRefused) {
  AlignedBuffer out(10);
  for (const std::string& path :
       std::vector<std::string>{"../outside/secret.bin", "models/../../outside/secret.bin",
                                "/etc/passwd", base_.path() + "/outside/secret.bin"}) {
    auto status = Read(path, 0, out.span());
    ASSERT_FALSE(status.has_value()) << path;
    EXPECT_EQ(status.error().code(), ErrorCode::kInvalidArgument) << path;
  }
}

TEST_P(SharedFilesystemTest, SymlinkOutOfTheRootIsRefused) {
  AlignedBuffer out(10);
  auto status = Read("escape-link", 0, out.span());
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(status.error().message().find("escape"), std::string::npos) << status.error().message();
}

TEST_P(SharedFilesystemTest, SymlinkInTheMiddleOfThePathIsRefused) {
  AlignedBuffer out(10);
  auto status = Read("outside-dir/secret.bin", 0, out.span());
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), ErrorCode::kPermissionDenied) << status.error().ToString();
}

TEST_P(SharedFilesystemTest, SymlinkInsideTheRootFollowsTheKernelRules) {
  AlignedBuffer out(100);
  auto status = Read("inner-link", 0, out.span());
  if (GetParam()) {
    // Without openat2 every symlink is refused.
    ASSERT_FALSE(status.has_value());
    EXPECT_EQ(status.error().code(), ErrorCode::kPermissionDenied);
  } else {
    ASSERT_TRUE(status.has_value()) << status.error().ToString();
    EXPECT_EQ(out.str(), content_.substr(0, 100));
  }
}

TEST_P(SharedFilesystemTest, FifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((root_ + "/pipe").c_str(), 0600), 0);
  AlignedBuffer out(10);
  auto status = Read("pipe", 0, out.span());
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), ErrorCode::kPermissionDenied);
}

TEST_P(SharedFilesystemTest, CancelledAndExpiredContextsStopTheRead) {
  AlignedBuffer out(10);
  core::CancellationToken cancel;
  cancel.Cancel();
  auto cancelled =
      source_->ReadRange({.path = "models/shard.safetensors"}, 0, out.span(), {.cancel = &cancel});
  ASSERT_FALSE(cancelled.has_value());
  EXPECT_EQ(cancelled.error().code(), ErrorCode::kCancelled);
  auto expired =
      source_->ReadRange({.path = "models/shard.safetensors"}, 0, out.span(),
                         {.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1)});
  ASSERT_FALSE(expired.has_value());
  EXPECT_EQ(expired.error().code(), ErrorCode::kDeadlineExceeded);
}

INSTANTIATE_TEST_SUITE_P(Resolution, SharedFilesystemTest, ::testing::Values(false, true),
                         [](const auto& param_info) {
                           return param_info.param ? "ComponentWalk" : "Openat2";
                         });

// A revision's path below the policy root: a symlink on the share that leads out of the policy
// root (here a tenant-made "revision folder" pointing at a secrets folder) reads nothing, while
// a symlink that stays below the policy root (a Hugging Face cache's snapshots -> blobs) works.
TEST(SharedFilesystemConfined, TheRevisionPathIsWalkedBeneathThePolicyRoot) {
  TempFolder base;
  base.Write("secrets/token", "node credentials");
  base.Write("share/hub/blobs/abc", "weights");
  std::filesystem::create_directories(base.path() + "/share/hub/snapshots/r1");
  std::filesystem::create_symlink("../../blobs/abc",
                                  base.path() + "/share/hub/snapshots/r1/model.safetensors");
  std::filesystem::create_symlink(base.path() + "/secrets", base.path() + "/share/evil");
  for (const bool walk : {false, true}) {
    auto escaped = SharedFilesystemRangeSource::Create({.name = "nfs",
                                                        .root = base.path() + "/share/evil",
                                                        .confine_to = base.path() + "/share",
                                                        .force_component_walk = walk});
    ASSERT_FALSE(escaped.has_value()) << "walk=" << walk;
    EXPECT_EQ(escaped.error().code(), ErrorCode::kPermissionDenied) << escaped.error().ToString();

    auto outside = SharedFilesystemRangeSource::Create({.name = "nfs",
                                                        .root = base.path() + "/secrets",
                                                        .confine_to = base.path() + "/share",
                                                        .force_component_walk = walk});
    ASSERT_FALSE(outside.has_value());
    EXPECT_EQ(outside.error().code(), ErrorCode::kPermissionDenied);
  }
  auto snapshot =
      SharedFilesystemRangeSource::Create({.name = "nfs",
                                           .root = base.path() + "/share/hub/snapshots/r1",
                                           .confine_to = base.path() + "/share"});
  ASSERT_TRUE(snapshot.has_value()) << snapshot.error().ToString();
  AlignedBuffer out(7);
  auto read = (*snapshot)->ReadRange({.path = "model.safetensors"}, 0, out.span(), {});
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  EXPECT_EQ(out.str(), "weights");
}

TEST(SharedFilesystemCreate, MissingRootIsNotFound) {
  auto source = SharedFilesystemRangeSource::Create({.name = "x", .root = "/nonexistent/root"});
  ASSERT_FALSE(source.has_value());
  EXPECT_EQ(source.error().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace modelplane::agent
