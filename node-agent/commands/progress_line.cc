#include "node-agent/commands/progress_line.h"

#include <cstdio>

#include <fmt/format.h>
#include <unistd.h>

namespace modelplane::agent {

std::string FormatBytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", bytes, kUnits[unit]);
}

ProgressLine::ProgressLine() : enabled_(::isatty(STDERR_FILENO) == 1) {}

std::string FormatFinish(const FetchProgress& progress) {
  if (!progress.goodput_bytes_per_second) return "measuring";
  if (!progress.expected_finish) return "nothing landing";
  const auto seconds = progress.expected_finish->count();
  if (seconds >= 3600) return fmt::format("done in {}h{:02}m", seconds / 3600, seconds % 3600 / 60);
  return fmt::format("done in {}m{:02}s", seconds / 60, seconds % 60);
}

void ProgressLine::Update(const FetchProgress& progress) {
  if (!enabled_) return;
  constexpr int kWidth = 30;
  const std::uint64_t done = progress.done_bytes;
  const std::uint64_t total = progress.total_bytes;
  const double fraction = total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
  const int filled = static_cast<int>(fraction * kWidth);
  fmt::print(stderr, "\r[{}{}] {:3.0f}%  {} / {}  {}/s  {}   ", std::string(filled, '#'),
             std::string(kWidth - filled, ' '), fraction * 100,
             FormatBytes(static_cast<double>(done)), FormatBytes(static_cast<double>(total)),
             FormatBytes(progress.goodput_bytes_per_second.value_or(0)), FormatFinish(progress));
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::Finish() {
  if (drawn_) fmt::print(stderr, "\n");
  drawn_ = false;
}

}  // namespace modelplane::agent
