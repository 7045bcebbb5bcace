#include "node-agent/fetch/source_throughput.h"

namespace modelplane::agent {
namespace {

void Blend(std::map<std::string, double, std::less<>>& averages, std::string_view key,
           double sample) {
  auto found = averages.find(key);
  if (found == averages.end()) {
    averages.emplace(std::string(key), sample);
  } else {
    found->second += SourceThroughput::kWeight * (sample - found->second);
  }
}

// "objectStore/s3" -> "objectStore": every source name starts with its tier (range_source.h).
std::string_view TierOf(std::string_view source_name) {
  return source_name.substr(0, source_name.find('/'));
}

}  // namespace

void SourceThroughput::Record(const FetchReport& report) {
  if (!report.times.first_byte || !report.times.last_byte) return;
  std::map<std::string, std::uint64_t> bytes_by_source;
  std::uint64_t total = 0;
  for (const FileReport& file : report.files) {
    for (const auto& [source, bytes] : file.bytes_by_source) {
      bytes_by_source[source] += bytes;
      total += bytes;
    }
  }
  const double seconds =
      std::chrono::duration<double>(*report.times.last_byte - *report.times.first_byte).count();
  if (total < kMinimumSampleBytes || seconds <= 0) return;
  const double rate = static_cast<double>(total) / seconds;
  std::map<std::string, std::uint64_t> bytes_by_tier;
  for (const auto& [source, bytes] : bytes_by_source) {
    bytes_by_tier[std::string(TierOf(source))] += bytes;
  }
  std::lock_guard lock(mutex_);
  for (const auto& [source, bytes] : bytes_by_source) {
    Blend(by_source_, source, rate * static_cast<double>(bytes) / static_cast<double>(total));
  }
  for (const auto& [tier, bytes] : bytes_by_tier) {
    Blend(by_tier_, tier, rate * static_cast<double>(bytes) / static_cast<double>(total));
  }
}

std::optional<double> SourceThroughput::SourceBytesPerSecond(std::string_view source_name) const {
  std::lock_guard lock(mutex_);
  const auto found = by_source_.find(source_name);
  if (found == by_source_.end()) return std::nullopt;
  return found->second;
}

std::optional<double> SourceThroughput::TierBytesPerSecond(std::string_view tier) const {
  std::lock_guard lock(mutex_);
  const auto found = by_tier_.find(tier);
  if (found == by_tier_.end()) return std::nullopt;
  return found->second;
}

}  // namespace modelplane::agent
