#include "core/io/bounded_file.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <sys/stat.h>

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

class BoundedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::filesystem::temp_directory_path() /
              ("bounded-file-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }
  std::string Write(const std::string& name, const std::string& content) {
    auto path = (folder_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  std::filesystem::path folder_;
};

TEST_F(BoundedFileTest, ReadsAFileUpToAndIncludingTheLimit) {
  EXPECT_EQ(ReadBoundedFile(Write("exact", "12345"), 5).value(), "12345");
  EXPECT_EQ(ReadBoundedFile(Write("empty", ""), 5).value(), "");
}

TEST_F(BoundedFileTest, AFileOverTheLimitIsRefusedNamingTheLimit) {
  auto read = ReadBoundedFile(Write("big", "123456"), 5);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(read.error().retryable()) << "the same file is as big next time";
  EXPECT_NE(read.error().message().find("larger than the limit of 5 bytes"), std::string::npos)
      << read.error().message();
}

TEST_F(BoundedFileTest, AnEndlessFileCostsOnlyTheLimit) {
  // stat says 0 bytes and reading never ends: only the bound stops it.
  auto read = ReadBoundedFile("/dev/zero", 4096);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), ErrorCode::kInvalidArgument);
}

TEST_F(BoundedFileTest, AMissingFileIsNotFound) {
  auto missing = ReadBoundedFile((folder_ / "nothing").string(), 5);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message().find("nothing"), std::string::npos);
}

TEST_F(BoundedFileTest, AFolderIsRefusedAsNotAFile) {
  auto folder = ReadBoundedFile(folder_.string(), 5);
  ASSERT_FALSE(folder);
  EXPECT_EQ(folder.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(folder.error().message().find("is a directory"), std::string::npos)
      << folder.error().message();
}

TEST_F(BoundedFileTest, AFifoWithNoWriterIsRefusedAtOnceInsteadOfHanging) {
  // A blocking open of a fifo waits for a writer forever; the ctest timeout would be the
  // only way out.
  const auto path = (folder_ / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto fifo = ReadBoundedFile(path, 5);
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(fifo.error().message().find("is a fifo"), std::string::npos) << fifo.error().message();
}

}  // namespace
}  // namespace modelplane::core
