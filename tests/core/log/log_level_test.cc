#include "core/log/log_level.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

TEST(LogLevelTest, ParsesEveryNameInAnyCase) {
  EXPECT_EQ(ParseLogLevel("trace").value(), LogLevel::kTrace);
  EXPECT_EQ(ParseLogLevel("debug").value(), LogLevel::kDebug);
  EXPECT_EQ(ParseLogLevel("INFO").value(), LogLevel::kInfo);
  EXPECT_EQ(ParseLogLevel("Warn").value(), LogLevel::kWarn);
  EXPECT_EQ(ParseLogLevel("error").value(), LogLevel::kError);
  for (const LogLevel level :
       {LogLevel::kTrace, LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
    EXPECT_EQ(ParseLogLevel(LogLevelName(level)).value(), level);
  }
}

TEST(LogLevelTest, InvalidValueIsAClearError) {
  const auto parsed = ParseLogLevel("verbose\n");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parsed.error().message(),
            "invalid log level \"verbose\\n\": expected one of trace, debug, info, warn, error");
  EXPECT_FALSE(ParseLogLevel(""));
  EXPECT_FALSE(ParseLogLevel("warning"));
}

TEST(LogLevelTest, FlagBeatsEnvironmentBeatsFallback) {
  EXPECT_EQ(ResolveLogLevel("debug", "error").value(), LogLevel::kDebug);
  EXPECT_EQ(ResolveLogLevel("", "error").value(), LogLevel::kError);
  EXPECT_EQ(ResolveLogLevel("", "").value(), LogLevel::kInfo);
  EXPECT_EQ(ResolveLogLevel("", "", LogLevel::kWarn).value(), LogLevel::kWarn);
}

TEST(LogLevelTest, ErrorNamesWhereTheValueCameFrom) {
  const auto from_flag = ResolveLogLevel("loud", "");
  ASSERT_FALSE(from_flag);
  EXPECT_TRUE(from_flag.error().message().starts_with("--log-level: invalid log level \"loud\""))
      << from_flag.error().message();
  const auto from_environment = ResolveLogLevel("", "loud");
  ASSERT_FALSE(from_environment);
  EXPECT_TRUE(from_environment.error().message().starts_with("MODELPLANE_LOG_LEVEL: "))
      << from_environment.error().message();
}

// The test's only thread changes the environment while no other reads it.
// NOLINTBEGIN(concurrency-mt-unsafe)
TEST(LogLevelTest, ReadsTheEnvironmentVariable) {
  ASSERT_EQ(setenv("MODELPLANE_LOG_LEVEL", "debug", 1), 0);
  EXPECT_EQ(LogLevelFromEnvironment("").value(), LogLevel::kDebug);
  EXPECT_EQ(LogLevelFromEnvironment("error").value(), LogLevel::kError);
  ASSERT_EQ(setenv("MODELPLANE_LOG_LEVEL", "nonsense", 1), 0);
  EXPECT_FALSE(LogLevelFromEnvironment(""));
  ASSERT_EQ(unsetenv("MODELPLANE_LOG_LEVEL"), 0);
  EXPECT_EQ(LogLevelFromEnvironment("").value(), LogLevel::kInfo);
}
// NOLINTEND(concurrency-mt-unsafe)

}  // namespace
}  // namespace modelplane::core
