// A one-line progress display for a terminal ("[#####     ] 48%  1.2 GiB / 2.5 GiB  610 MiB/s"),
// redrawn in place on stderr, and nothing at all when stderr is not a terminal (CI logs, pipes).
// Thread safety: one thread calls Update and Finish.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace modelplane::agent {

[[nodiscard]] std::string FormatBytes(double bytes);

class ProgressLine {
 public:
  ProgressLine();
  void Update(std::uint64_t done, std::uint64_t total);
  void Finish();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace modelplane::agent
