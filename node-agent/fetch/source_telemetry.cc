#include "node-agent/fetch/source_telemetry.h"

#include <algorithm>

namespace modelplane::agent {

RequestOutcome OutcomeOf(const core::Error& error) {
  switch (error.code()) {
    case core::ErrorCode::kThrottled: return RequestOutcome::kThrottled;
    case core::ErrorCode::kDeadlineExceeded: return RequestOutcome::kTimedOut;
    default: return RequestOutcome::kFailed;
  }
}

SourceTelemetryRecorder::SourceTelemetryRecorder(const core::Clock& clock,
                                                 std::chrono::seconds window)
    : clock_(clock), window_(std::max(window, std::chrono::seconds(1))) {}

void SourceTelemetryRecorder::Trim(Source& source, core::Clock::SteadyTime now) const {
  const auto horizon = now - window_;
  while (!source.finished.empty() &&
         (source.finished.front().at < horizon || source.finished.size() > kMaxEventsPerSource)) {
    source.finished.pop_front();
  }
  while (!source.levels.empty() &&
         (source.levels.front().first < horizon || source.levels.size() > kMaxEventsPerSource)) {
    source.levels.pop_front();
  }
}

void SourceTelemetryRecorder::Started(std::string_view source_name, std::string_view tier) {
  const auto now = clock_.Now();
  std::lock_guard lock(mutex_);
  auto [entry, inserted] = sources_.try_emplace(std::string(source_name));
  Source& source = entry->second;
  if (inserted) source.tier = std::string(tier);
  ++source.in_flight;
  source.levels.emplace_back(now, source.in_flight);
  Trim(source, now);
}

void SourceTelemetryRecorder::Finished(std::string_view source_name, RequestOutcome outcome,
                                       std::uint64_t bytes,
                                       std::optional<std::chrono::milliseconds> ttfb) {
  const auto now = clock_.Now();
  std::lock_guard lock(mutex_);
  auto entry = sources_.find(source_name);
  if (entry == sources_.end()) return;
  Source& source = entry->second;
  source.in_flight = std::max(0, source.in_flight - 1);
  source.finished.push_back({.at = now, .bytes = bytes, .outcome = outcome, .ttfb = ttfb});
  Trim(source, now);
}

void SourceTelemetryRecorder::Abandoned(std::string_view source_name) {
  std::lock_guard lock(mutex_);
  auto entry = sources_.find(source_name);
  if (entry != sources_.end()) entry->second.in_flight = std::max(0, entry->second.in_flight - 1);
}

std::vector<core::api::SourceTelemetry> SourceTelemetryRecorder::Snapshot(
    std::size_t max_sources) const {
  const auto now = clock_.Now();
  const auto wall_now = std::chrono::time_point_cast<std::chrono::microseconds>(clock_.WallNow());
  std::vector<core::api::SourceTelemetry> out;
  std::lock_guard lock(mutex_);
  for (auto entry = sources_.begin(); entry != sources_.end();) {
    Source& source = entry->second;
    Trim(source, now);
    if (source.finished.empty() && source.levels.empty() && source.in_flight == 0) {
      entry = sources_.erase(entry);  // idle for a whole window: nothing to report
      continue;
    }
    core::api::SourceTelemetry telemetry{
        .source = entry->first,
        .tier = source.tier,
        .window_seconds = static_cast<std::int32_t>(window_.count()),
        .window_end = wall_now,
        .granted_streams = -1};
    std::uint64_t bytes = 0;
    std::vector<std::int64_t> ttfbs;
    auto earliest = now;
    for (const Event& event : source.finished) {
      bytes += event.bytes;
      earliest = std::min(earliest, event.at);
      switch (event.outcome) {
        case RequestOutcome::kOk: ++telemetry.requests_ok; break;
        case RequestOutcome::kThrottled: ++telemetry.requests_throttled; break;
        case RequestOutcome::kFailed: ++telemetry.requests_failed; break;
        case RequestOutcome::kTimedOut: ++telemetry.requests_timed_out; break;
      }
      if (event.ttfb) ttfbs.push_back(event.ttfb->count());
    }
    int peak = source.in_flight;
    for (const auto& [at, level] : source.levels) {
      peak = std::max(peak, level);
      earliest = std::min(earliest, at);
    }
    telemetry.peak_streams = peak;
    // Over the part of the window the source was in use: a source first asked two seconds ago
    // moved its bytes in two seconds, not in the whole window.
    const double covered =
        std::max(0.25, std::chrono::duration<double>(
                           std::min<core::Clock::SteadyTime::duration>(now - earliest, window_))
                           .count());
    telemetry.bytes_per_second = static_cast<std::int64_t>(static_cast<double>(bytes) / covered);
    if (!ttfbs.empty()) {
      std::nth_element(ttfbs.begin(), ttfbs.begin() + static_cast<std::ptrdiff_t>(ttfbs.size() / 2),
                       ttfbs.end());
      telemetry.ttfb_milliseconds = ttfbs[ttfbs.size() / 2];
    }
    out.push_back(std::move(telemetry));
    ++entry;
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.bytes_per_second != b.bytes_per_second) return a.bytes_per_second > b.bytes_per_second;
    return a.source < b.source;
  });
  if (out.size() > max_sources) out.resize(max_sources);
  return out;
}

}  // namespace modelplane::agent
