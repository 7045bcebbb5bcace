#include "tests/support/child_process.h"

#include <chrono>
#include <filesystem>
#include <thread>

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::testing {
namespace {

TEST(ChildProcessTest, AProgramThatCannotRunIsAnErrorWithTheSystemsReason) {
  auto missing = ChildProcess::Start({"/nonexistent/modelplane-binary"});
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message(), ::testing::HasSubstr("No such file or directory"));
  auto no_log = ChildProcess::Start({"true"}, {.log_path = "/nonexistent/dir/child.log"});
  ASSERT_FALSE(no_log);
}

TEST(ChildProcessTest, WaitGivesTheExitCodeAndTheLogKeepsTheOutput) {
  const std::string log = (std::filesystem::temp_directory_path() /
                           ("child-process-test-" + std::to_string(::getpid()) + ".log"))
                              .string();
  auto child =
      ChildProcess::Start({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, {.log_path = log});
  ASSERT_TRUE(child) << child.error().ToString();
  const ExitStatus status = child->Wait();
  EXPECT_EQ(status.code, 3);
  EXPECT_EQ(status.signal, 0);
  EXPECT_FALSE(child->has_process());
  EXPECT_EQ(child->Log(), "out\nerr\n");
  std::filesystem::remove(log);
}

TEST(ChildProcessTest, StopEndsAChildWithTheSignalAndSaysSo) {
  auto child = ChildProcess::Start({"sleep", "60"});
  ASSERT_TRUE(child) << child.error().ToString();
  EXPECT_TRUE(child->Running());
  const ExitStatus status = child->Stop();
  EXPECT_EQ(status.signal, SIGTERM);
  EXPECT_FALSE(child->Running());
  // A child that ended by itself is not signalled; how it ended is returned.
  auto quick = ChildProcess::Start({"true"});
  ASSERT_TRUE(quick);
  for (int i = 0; i < 1000 && quick->Running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const ExitStatus ended = quick->Stop();
  EXPECT_EQ(ended.code, 0);
  EXPECT_EQ(ended.signal, 0);
}

}  // namespace
}  // namespace modelplane::testing
