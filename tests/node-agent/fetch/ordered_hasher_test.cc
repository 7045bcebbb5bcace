#include "node-agent/fetch/ordered_hasher.h"

#include <cstring>
#include <filesystem>
#include <random>

#include <fmt/format.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

constexpr std::size_t kHashedRange = 4 * 4096;
constexpr std::size_t kSize = 5 * kHashedRange + 100;  // six ranges, the last one short

class OrderedHasherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::filesystem::temp_directory_path() /
              fmt::format("ordered-hasher-test-{}-{}", ::getpid(),
                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
    std::mt19937 random(7);
    content_.resize(kSize);
    for (char& c : content_) c = static_cast<char>(random());
    auto pool = BufferPool::Create(kHashedRange, 8);
    ASSERT_TRUE(pool);
    pool_ = std::move(*pool);
    partial_ = Open();
    ASSERT_TRUE(partial_->Preallocate());
  }
  void TearDown() override {
    partial_.reset();
    std::filesystem::remove_all(folder_);
  }

  std::unique_ptr<PartialBlob> Open() {
    auto partial = PartialBlob::OpenOrResume(
        folder_ / "blob.partial", folder_ / "blob.progress",
        {.digest = core::Sha256Of(content_), .size = kSize, .range_size = kHashedRange},
        Reservation());
    EXPECT_TRUE(partial) << partial.error().ToString();
    return std::move(*partial);
  }

  // Writes range `index` to the staging file as a fetch worker would; returns its buffer.
  BufferLease Write(std::size_t index) {
    auto lease = pool_->TryAcquire();
    EXPECT_TRUE(lease.has_value());
    const std::size_t length = partial_->RangeLength(index);
    std::memcpy(lease->bytes().data(), content_.data() + partial_->RangeOffset(index), length);
    EXPECT_TRUE(partial_->WriteRange(index, lease->bytes().first(length), lease->capacity()));
    EXPECT_TRUE(partial_->MarkRangeDone(index));
    return std::move(*lease);
  }

  std::filesystem::path folder_;
  std::string content_;
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<PartialBlob> partial_;
  std::vector<std::size_t> progress_;
  OrderedHasher hasher_{[this](std::size_t next) { progress_.push_back(next); }};
};

TEST_F(OrderedHasherTest, HashesInFileOrderWhateverOrderRangesLandIn) {
  const std::uint32_t generation = hasher_.Restart(*partial_);
  int completions = 0;
  for (std::size_t index : {2, 0, 5, 1, 4, 3}) {
    const auto outcome = hasher_.Land(generation, index, Write(index));
    ASSERT_TRUE(outcome.status);
    completions += outcome.complete ? 1 : 0;
    EXPECT_EQ(outcome.complete, index == 3) << "complete only once every range is hashed";
  }
  EXPECT_EQ(completions, 1);
  EXPECT_EQ(hasher_.TakeDigest(), core::Sha256Of(content_));
  EXPECT_EQ(progress_, (std::vector<std::size_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(hasher_.parked(), 0u);
  EXPECT_EQ(pool_->Stats().in_use, 0u) << "every parked buffer went back to the pool";
}

TEST_F(OrderedHasherTest, RangesAlreadyOnDiskAreReadBack) {
  // A resumed staging: ranges 0-2 were written by an earlier process.
  for (std::size_t index = 0; index < 3; ++index) Write(index).Return();
  partial_.reset();
  partial_ = Open();
  ASSERT_EQ(partial_->resumed_ranges(), 3u);
  const std::uint32_t generation = hasher_.Restart(*partial_);
  const auto caught_up = hasher_.CatchUp(generation);
  ASSERT_TRUE(caught_up.status);
  EXPECT_FALSE(caught_up.complete);
  EXPECT_EQ(progress_.back(), 3u);
  bool complete = false;
  for (std::size_t index : {4, 5, 3})
    complete = hasher_.Land(generation, index, Write(index)).complete;
  EXPECT_TRUE(complete);
  EXPECT_EQ(hasher_.TakeDigest(), core::Sha256Of(content_));
}

TEST_F(OrderedHasherTest, ARestartDropsWhatTheEarlierGenerationParked) {
  const std::uint32_t first = hasher_.Restart(*partial_);
  ASSERT_FALSE(hasher_.Land(first, 1, Write(1)).complete);
  EXPECT_EQ(hasher_.parked(), 1u);

  // The file starts over (its digest did not match): new staging, new generation.
  partial_->Discard();
  partial_ = Open();
  ASSERT_TRUE(partial_->Preallocate());
  const std::uint32_t second = hasher_.Restart(*partial_);
  EXPECT_NE(first, second);
  EXPECT_EQ(hasher_.parked(), 0u);
  EXPECT_EQ(pool_->Stats().in_use, 0u);
  // A range of the old generation still in flight lands late: dropped, its buffer returned.
  EXPECT_FALSE(hasher_.Land(first, 0, Write(0)).complete);
  EXPECT_EQ(pool_->Stats().in_use, 0u);

  bool complete = false;
  for (std::size_t index = 0; index < 6; ++index) {
    complete = hasher_.Land(second, index, Write(index)).complete;
  }
  EXPECT_TRUE(complete);
  EXPECT_EQ(hasher_.TakeDigest(), core::Sha256Of(content_));
}

TEST_F(OrderedHasherTest, AnEmptyFileIsCompleteAtOnce) {
  auto empty = PartialBlob::OpenOrResume(
      folder_ / "empty.partial", folder_ / "empty.progress",
      {.digest = core::Sha256Of(""), .size = 0, .range_size = kHashedRange}, Reservation());
  ASSERT_TRUE(empty);
  OrderedHasher hasher({});
  const auto outcome = hasher.CatchUp(hasher.Restart(**empty));
  EXPECT_TRUE(outcome.complete);
  EXPECT_EQ(hasher.TakeDigest(), core::Sha256Of(""));
}

}  // namespace
}  // namespace modelplane::agent
