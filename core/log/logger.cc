#include "core/log/logger.h"

#include <utility>

#include <fmt/format.h>
#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace modelplane::core {
namespace {

Result<spdlog::sink_ptr> MakeSink(const LogSink& sink) {
  switch (sink.kind) {
    case LogSink::Kind::kStderr: return std::make_shared<spdlog::sinks::stderr_sink_mt>();
    case LogSink::Kind::kStream:
      if (sink.stream == nullptr) {
        return MakeError(ErrorCode::kInvalidArgument, "log sink stream is null");
      }
      return std::make_shared<spdlog::sinks::ostream_sink_mt>(*sink.stream);
    case LogSink::Kind::kFile:
      try {
        return std::make_shared<spdlog::sinks::basic_file_sink_mt>(sink.path, /*truncate=*/false);
      } catch (const spdlog::spdlog_ex& error) {
        return MakeError(ErrorCode::kIo,
                         fmt::format("cannot open log file {}: {}", sink.path, error.what()));
      }
  }
  return MakeError(ErrorCode::kInternal, "unknown log sink kind");
}

spdlog::level::level_enum ToSpdlogLevel(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return spdlog::level::trace;
    case LogLevel::kDebug: return spdlog::level::debug;
    case LogLevel::kInfo: return spdlog::level::info;
    case LogLevel::kWarn: return spdlog::level::warn;
    case LogLevel::kError: return spdlog::level::err;
  }
  return spdlog::level::err;
}

}  // namespace

Result<Logger> Logger::Create(LoggerOptions options) {
  if (options.component.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "logger component is empty");
  }
  auto sink = MakeSink(options.sink);
  if (!sink) return std::unexpected(sink.error());
  // Not registered with spdlog's global registry: the Logger object is the only handle.
  auto spdlog_logger = std::make_shared<spdlog::logger>(options.component, std::move(*sink));
  spdlog_logger->set_formatter(std::make_unique<spdlog::pattern_formatter>(
      "%v", spdlog::pattern_time_type::utc, std::string("\n")));
  spdlog_logger->set_level(spdlog::level::trace);  // Logger filters before formatting
  spdlog_logger->flush_on(spdlog::level::warn);
  if (!options.clock) options.clock = [] { return std::chrono::system_clock::now(); };
  return Logger(std::move(spdlog_logger), std::move(options.component), options.level,
                options.format, std::move(options.clock));
}

Logger::Logger(std::shared_ptr<spdlog::logger> sink, std::string component, LogLevel level,
               LogFormat format, LogClock clock)
    : sink_(std::move(sink)),
      component_(std::move(component)),
      level_(level),
      format_(format),
      clock_(std::move(clock)) {}

Logger Logger::WithComponent(std::string component) const {
  Logger derived = *this;
  derived.component_ = std::move(component);
  return derived;
}

Logger Logger::WithFields(std::initializer_list<LogField> fields) const {
  Logger derived = *this;
  AppendLogFields(derived.rendered_context_, format_,
                  std::span<const LogField>(fields.begin(), fields.size()));
  return derived;
}

void Logger::Log(LogLevel level, std::string_view event, std::span<const LogField> fields) const {
  if (!Enabled(level)) return;
  const std::string line = FormatLogLine(
      format_, {.time = clock_(), .level = level, .component = component_, .event = event},
      rendered_context_, fields);
  sink_->log(ToSpdlogLevel(level), spdlog::string_view_t(line.data(), line.size()));
}

void Logger::Flush() const {
  sink_->flush();
}

}  // namespace modelplane::core
