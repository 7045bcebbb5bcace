// What a fetch did, per file and per revision: which tiers served how many bytes, what was
// already there, what was resumed, what failed and why, and when each stage finished. The CLI
// prints it as JSON; the agent turns it into ModelCache status.
// Thread safety: value types.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error/error.h"

namespace modelplane::agent {

using WallTime = std::chrono::system_clock::time_point;

// When each stage finished; bytes-to-ready is published - queued.
struct StageTimes {
  std::optional<WallTime> queued;
  std::optional<WallTime> first_byte;
  std::optional<WallTime> last_byte;
  std::optional<WallTime> verified;
  std::optional<WallTime> published;
};

struct SourceFailure {
  std::string source;  // RangeSource::name()
  core::ErrorCode code = core::ErrorCode::kUnavailable;
};

struct FileReport {
  std::string path;
  std::string sha256;
  std::uint64_t size = 0;
  // "local" when the blob was already in the cache, else the tier that served most bytes.
  std::string tier;
  std::map<std::string, std::uint64_t> bytes_by_source;  // source name -> bytes fetched
  std::uint64_t resumed_bytes = 0;                       // reused from an interrupted staging
  std::uint32_t restarts = 0;                            // whole-file refetches after a mismatch
  std::vector<std::string> problems;                     // failures it recovered from
  // Resumed bytes thrown away because the file they were part of did not match: the first
  // mismatch of a resumed file restarts it from byte 0 without blaming a source (the partial on
  // this disk may be what was wrong). That restart counts in `restarts` too.
  std::uint64_t resumed_bytes_discarded = 0;
  // Each source given up on for this file and why (the error's code; its text is in problems),
  // in order: what status may say without repeating what a source answered.
  std::vector<SourceFailure> source_failures;
  StageTimes times;
};

struct FetchReport {
  std::string revision_digest;
  std::string name;
  bool ready = false;
  std::string error;  // when not ready
  std::uint64_t total_bytes = 0;
  std::uint64_t fetched_bytes = 0;  // moved over the network or from a shared filesystem
  std::uint64_t local_bytes = 0;    // already in the cache
  std::uint64_t resumed_bytes = 0;  // kept: a file that started over after a mismatch kept none
  std::uint64_t resumed_bytes_discarded = 0;  // summed over files
  std::map<std::string, std::uint64_t> bytes_by_tier;
  std::string tier;  // "local", or the tier that served most bytes
  // Files whose bytes went to the store's quarantine after a mismatch: the sum of restarts.
  std::uint64_t quarantines = 0;
  std::size_t buffer_high_water_bytes = 0;
  StageTimes times;
  std::vector<FileReport> files;
  // When the fetch gave up for its pace (below FetchOptions::min_goodput, or past its
  // deadline): the engine's own account, numbers only, with no source's answer in it, so fit
  // for status. Empty otherwise.
  std::string pace_verdict;

  [[nodiscard]] double SecondsToReady() const;
};

[[nodiscard]] nlohmann::json ToJson(const FetchReport& report);
[[nodiscard]] std::string FormatTimestamp(WallTime time);  // RFC 3339, UTC, milliseconds

}  // namespace modelplane::agent
