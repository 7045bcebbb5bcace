// What each source has delivered lately, in bytes per second: an exponentially weighted average
// over the agent's completed fetches, per source name ("objectStore/s3") and per tier ("peer").
// Eviction prices a revision by what fetching it again would cost (node-agent/eviction), and
// this is the measurement behind that price.
//
// A fetch's rate is its fetched bytes over the time from its first to its last byte, shared
// among its sources in proportion to the bytes each served: aggregate throughput, the number
// that decides how long a refetch takes, not the speed of one request. Fetches that moved less
// than kMinimumSampleBytes measure latency rather than throughput and are not counted.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "node-agent/fetch/fetch_report.h"

namespace modelplane::agent {

class SourceThroughput {
 public:
  static constexpr std::uint64_t kMinimumSampleBytes = 1 << 20;
  static constexpr double kWeight = 0.3;  // of the newest sample

  void Record(const FetchReport& report);
  // Nullopt until a fetch measured it.
  [[nodiscard]] std::optional<double> SourceBytesPerSecond(std::string_view source_name) const;
  [[nodiscard]] std::optional<double> TierBytesPerSecond(std::string_view tier) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, double, std::less<>> by_source_;
  std::map<std::string, double, std::less<>> by_tier_;
};

}  // namespace modelplane::agent
