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

ProgressLine::ProgressLine()
    : enabled_(::isatty(STDERR_FILENO) == 1), started_(std::chrono::steady_clock::now()) {}

void ProgressLine::Update(std::uint64_t done, std::uint64_t total) {
  if (!enabled_) return;
  constexpr int kWidth = 30;
  const double fraction = total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
  const int filled = static_cast<int>(fraction * kWidth);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  fmt::print(stderr, "\r[{}{}] {:3.0f}%  {} / {}  {}/s   ", std::string(filled, '#'),
             std::string(kWidth - filled, ' '), fraction * 100,
             FormatBytes(static_cast<double>(done)), FormatBytes(static_cast<double>(total)),
             FormatBytes(rate));
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::Finish() {
  if (drawn_) fmt::print(stderr, "\n");
  drawn_ = false;
}

}  // namespace modelplane::agent
