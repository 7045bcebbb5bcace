// A one-line progress display for a terminal
// ("[#####     ] 48%  1.2 GiB / 2.5 GiB  610 MiB/s  done in 2m05s"): the goodput (bytes that
// landed, over the fetch's goodput window) and the expected finish at that pace, redrawn in
// place on stderr, and nothing at all when stderr is not a terminal (CI logs, pipes).
// Thread safety: one thread calls Update and Finish.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "node-agent/fetch/fetch_engine.h"

namespace modelplane::agent {

[[nodiscard]] std::string FormatBytes(double bytes);
// "done in 2m05s", "nothing landing" (no goodput), "measuring" (too early to say).
[[nodiscard]] std::string FormatFinish(const FetchProgress& progress);

class ProgressLine {
 public:
  ProgressLine();
  void Update(const FetchProgress& progress);
  void Finish();

 private:
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace modelplane::agent
