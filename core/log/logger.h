// Logger: structured, one-event-per-line logging for every modelplane binary.
//
// Design: an event is a past-tense name plus typed fields,
//   logger.Info("fetch_completed", {{"file", name}, {"bytes", n}, {"seconds", 1.5}});
// rendered by log_line.h as key=value or JSON lines with ts, level and component first. spdlog
// supplies the sinks (stderr, a file, an ostream for tests) and serialises writes, so
// concurrent events never interleave within a line; the line itself is formatted before
// spdlog sees it, with spdlog's pattern reduced to the bare message. No spdlog registry or
// default logger is used: each binary creates its Logger in main and injects it, and
// components derive their own with WithComponent or WithFields (sharing the sink). The clock is
// injectable so tests can assert exact lines. Warnings and errors flush at once.
//
// Thread safety: a Logger may be used from any number of threads at once, and so may copies
// and derived loggers sharing its sink. Separate Create calls on stderr are safe together
// (spdlog serialises all console sinks); for a file, create one logger and derive the others,
// since two file sinks on one path would each buffer and could split each other's lines.
#pragma once

#include <chrono>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/error/error.h"
#include "core/log/log_field.h"
#include "core/log/log_level.h"
#include "core/log/log_line.h"

namespace spdlog {
class logger;
}

namespace modelplane::core {

struct LogSink {
  enum class Kind { kStderr, kFile, kStream };

  static LogSink Stderr() { return {}; }
  // Appends to the file, creating it if needed.
  static LogSink File(std::string path) { return {.kind = Kind::kFile, .path = std::move(path)}; }
  // For tests; the stream must outlive every logger writing to it.
  static LogSink Stream(std::ostream& stream) { return {.kind = Kind::kStream, .stream = &stream}; }

  Kind kind = Kind::kStderr;
  std::string path = {};
  std::ostream* stream = nullptr;
};

using LogClock = std::function<std::chrono::system_clock::time_point()>;

struct LoggerOptions {
  std::string component;  // e.g. "node-agent"; must not be empty
  LogLevel level = LogLevel::kInfo;
  LogFormat format = LogFormat::kKeyValue;
  LogSink sink = LogSink::Stderr();
  LogClock clock = {};  // empty: std::chrono::system_clock::now
};

class Logger {
 public:
  // Fails on an empty component, or a file sink that cannot be opened.
  [[nodiscard]] static Result<Logger> Create(LoggerOptions options);

  // Same sink, level and format; another component name, e.g. "node-agent.stager".
  [[nodiscard]] Logger WithComponent(std::string component) const;
  // Same everything, plus fields written on every event after the header (e.g. revision=...).
  [[nodiscard]] Logger WithFields(std::initializer_list<LogField> fields) const;

  [[nodiscard]] bool Enabled(LogLevel level) const { return level >= level_; }
  [[nodiscard]] LogLevel level() const { return level_; }

  void Log(LogLevel level, std::string_view event, std::span<const LogField> fields) const;
  void Log(LogLevel level, std::string_view event,
           std::initializer_list<LogField> fields = {}) const {
    Log(level, event, std::span<const LogField>(fields.begin(), fields.size()));
  }
  void Trace(std::string_view event, std::initializer_list<LogField> fields = {}) const {
    Log(LogLevel::kTrace, event, fields);
  }
  void Debug(std::string_view event, std::initializer_list<LogField> fields = {}) const {
    Log(LogLevel::kDebug, event, fields);
  }
  void Info(std::string_view event, std::initializer_list<LogField> fields = {}) const {
    Log(LogLevel::kInfo, event, fields);
  }
  void Warn(std::string_view event, std::initializer_list<LogField> fields = {}) const {
    Log(LogLevel::kWarn, event, fields);
  }
  void Error(std::string_view event, std::initializer_list<LogField> fields = {}) const {
    Log(LogLevel::kError, event, fields);
  }

  // Writes out anything the sink buffers (file sinks buffer below warn).
  void Flush() const;

 private:
  Logger(std::shared_ptr<spdlog::logger> sink, std::string component, LogLevel level,
         LogFormat format, LogClock clock);

  std::shared_ptr<spdlog::logger> sink_;  // shared by every logger derived from one Create
  std::string component_;
  LogLevel level_;
  LogFormat format_;
  LogClock clock_;
  std::string rendered_context_;  // WithFields, already in format_
};

}  // namespace modelplane::core
