#include "node-agent/fetch/fetch_report.h"

#include <ctime>

#include <fmt/format.h>

namespace modelplane::agent {
namespace {

nlohmann::json TimesToJson(const StageTimes& times) {
  nlohmann::json out = nlohmann::json::object();
  auto put = [&](const char* key, const std::optional<WallTime>& time) {
    if (time) out[key] = FormatTimestamp(*time);
  };
  put("queued", times.queued);
  put("firstByte", times.first_byte);
  put("lastByte", times.last_byte);
  put("verified", times.verified);
  put("published", times.published);
  return out;
}

}  // namespace

std::string FormatTimestamp(WallTime time) {
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                     millis % 1000);
}

double FetchReport::SecondsToReady() const {
  if (!times.queued || !times.published) return 0;
  return std::chrono::duration<double>(*times.published - *times.queued).count();
}

nlohmann::json ToJson(const FetchReport& report) {
  nlohmann::json files = nlohmann::json::array();
  for (const FileReport& file : report.files) {
    nlohmann::json entry = {{"path", file.path},
                            {"sha256", file.sha256},
                            {"size", file.size},
                            {"tier", file.tier},
                            {"bytesBySource", file.bytes_by_source},
                            {"resumedBytes", file.resumed_bytes},
                            {"restarts", file.restarts},
                            {"resumedBytesDiscarded", file.resumed_bytes_discarded},
                            {"times", TimesToJson(file.times)}};
    if (!file.problems.empty()) entry["problems"] = file.problems;
    files.push_back(std::move(entry));
  }
  nlohmann::json out = {{"revisionDigest", report.revision_digest},
                        {"name", report.name},
                        {"ready", report.ready},
                        {"totalBytes", report.total_bytes},
                        {"fetchedBytes", report.fetched_bytes},
                        {"localBytes", report.local_bytes},
                        {"resumedBytes", report.resumed_bytes},
                        {"resumedBytesDiscarded", report.resumed_bytes_discarded},
                        {"bytesByTier", report.bytes_by_tier},
                        {"tier", report.tier},
                        {"quarantines", report.quarantines},
                        {"bufferHighWaterBytes", report.buffer_high_water_bytes},
                        {"secondsToReady", report.SecondsToReady()},
                        {"times", TimesToJson(report.times)},
                        {"files", std::move(files)}};
  if (!report.error.empty()) out["error"] = report.error;
  if (!report.pace_verdict.empty()) out["paceVerdict"] = report.pace_verdict;
  return out;
}

}  // namespace modelplane::agent
