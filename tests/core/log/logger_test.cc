#include "core/log/logger.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::chrono::system_clock::time_point kLoggerTime{seconds(1795973832) + milliseconds(7)};

Logger MakeLogger(std::ostream& stream, LogLevel level = LogLevel::kInfo,
                  LogFormat format = LogFormat::kKeyValue) {
  return Logger::Create({.component = "node-agent",
                         .level = level,
                         .format = format,
                         .sink = LogSink::Stream(stream),
                         .clock = [] { return kLoggerTime; }})
      .value();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

TEST(LoggerTest, WritesOneExactLinePerEvent) {
  std::ostringstream out;
  const Logger logger = MakeLogger(out);
  const std::string name = "model-00001.safetensors";
  logger.Info("fetch_completed", {{"file", name}, {"bytes", 1024}, {"seconds", 1.5}});
  logger.Warn("peer_quarantined", {{"peer", "10.0.0.7:7070"}, {"reason", "digest mismatch"}});
  EXPECT_EQ(out.str(),
            "ts=2026-11-29T17:37:12.007Z level=info component=node-agent event=fetch_completed "
            "file=model-00001.safetensors bytes=1024 seconds=1.5\n"
            "ts=2026-11-29T17:37:12.007Z level=warn component=node-agent event=peer_quarantined "
            "peer=10.0.0.7:7070 reason=\"digest mismatch\"\n");
}

TEST(LoggerTest, FiltersBelowItsLevel) {
  std::ostringstream out;
  const Logger logger = MakeLogger(out, LogLevel::kWarn);
  logger.Trace("a_happened");
  logger.Debug("b_happened");
  logger.Info("c_happened");
  EXPECT_EQ(out.str(), "");
  EXPECT_FALSE(logger.Enabled(LogLevel::kInfo));
  EXPECT_TRUE(logger.Enabled(LogLevel::kError));
  logger.Error("d_failed");
  EXPECT_EQ(out.str(),
            "ts=2026-11-29T17:37:12.007Z level=error component=node-agent event=d_failed\n");
}

TEST(LoggerTest, JsonLines) {
  std::ostringstream out;
  const Logger logger = MakeLogger(out, LogLevel::kTrace, LogFormat::kJson);
  logger.Trace("cache_scanned", {{"files", 3u}, {"complete", true}});
  EXPECT_EQ(out.str(),
            R"({"ts":"2026-11-29T17:37:12.007Z","level":"trace","component":"node-agent",)"
            R"("event":"cache_scanned","files":3,"complete":true})"
            "\n");
}

TEST(LoggerTest, DerivedLoggersShareTheSink) {
  std::ostringstream out;
  const Logger base = MakeLogger(out);
  const Logger stager = base.WithComponent("node-agent.stager").WithFields({{"revision", "r 1"}});
  stager.Info("stage_started", {{"files", 2}});
  base.Info("agent_started");
  EXPECT_EQ(Lines(out.str()),
            (std::vector<std::string>{
                "ts=2026-11-29T17:37:12.007Z level=info component=node-agent.stager "
                "event=stage_started revision=\"r 1\" files=2",
                "ts=2026-11-29T17:37:12.007Z level=info component=node-agent event=agent_started",
            }));
}

TEST(LoggerTest, FieldValuesAreNotFormatStrings) {
  std::ostringstream out;
  MakeLogger(out).Info("x_happened", {{"text", "{} {:d} %s"}});
  EXPECT_EQ(out.str(),
            "ts=2026-11-29T17:37:12.007Z level=info component=node-agent event=x_happened "
            "text=\"{} {:d} %s\"\n");
}

TEST(LoggerTest, RejectsBadOptions) {
  EXPECT_FALSE(Logger::Create({.component = ""}));
  const auto missing_directory =
      Logger::Create({.component = "x", .sink = LogSink::File("/dev/null/not-a-directory.log")});
  ASSERT_FALSE(missing_directory);
  EXPECT_EQ(missing_directory.error().code(), ErrorCode::kIo);
  EXPECT_FALSE(Logger::Create({.component = "x", .sink = {.kind = LogSink::Kind::kStream}}));
}

TEST(LoggerTest, FileSinkAppends) {
  const std::filesystem::path path = std::filesystem::path(MODELPLANE_BINARY_DIR) /
                                     ("logger_test_" + std::to_string(::getpid()) + ".log");
  std::filesystem::remove(path);
  {
    auto logger =
        Logger::Create({.component = "x", .sink = LogSink::File(path.string()), .clock = [] {
                          return kLoggerTime;
                        }});
    ASSERT_TRUE(logger.has_value()) << logger.error().ToString();
    logger->Info("first_happened");
    logger->Flush();
  }
  {
    auto logger =
        Logger::Create({.component = "x", .sink = LogSink::File(path.string()), .clock = [] {
                          return kLoggerTime;
                        }});
    ASSERT_TRUE(logger.has_value());
    logger->Info("second_happened");
  }
  std::ifstream file(path);
  const std::string content((std::istreambuf_iterator<char>(file)), {});
  EXPECT_EQ(content,
            "ts=2026-11-29T17:37:12.007Z level=info component=x event=first_happened\n"
            "ts=2026-11-29T17:37:12.007Z level=info component=x event=second_happened\n");
  std::filesystem::remove(path);
}

// Many threads logging at once: every line is whole, none is lost.
TEST(LoggerTest, ConcurrentEventsNeverInterleave) {
  std::ostringstream out;
  const Logger logger = MakeLogger(out);
  constexpr int kThreads = 8;
  constexpr int kEvents = 500;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Logger mine = logger.WithFields({{"thread", t}});
      for (int i = 0; i < kEvents; ++i) {
        mine.Info("tick_happened", {{"i", i}, {"payload", std::string(100, 'p')}});
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const std::vector<std::string> lines = Lines(out.str());
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kThreads * kEvents));
  std::vector<int> per_thread(kThreads, 0);
  for (const std::string& line : lines) {
    const std::string prefix =
        "ts=2026-11-29T17:37:12.007Z level=info component=node-agent event=tick_happened thread=";
    ASSERT_TRUE(line.starts_with(prefix)) << line;
    ASSERT_TRUE(line.ends_with(" payload=" + std::string(100, 'p'))) << line;
    ++per_thread.at(std::stoul(line.substr(prefix.size())));
  }
  for (const int count : per_thread) EXPECT_EQ(count, kEvents);
}

}  // namespace
}  // namespace modelplane::core
