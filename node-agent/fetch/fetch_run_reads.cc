// How one range of a fetch is read: the source it goes to (the blob's order, free slots, the
// node's admission), waiting while none can serve, retries paid from the source's quota, and
// giving a source up for the file.
#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "core/api/model_revision.h"
#include "core/backoff/backoff.h"
#include "node-agent/fetch/fetch_run.h"
#include "node-agent/fetch/source_order.h"

namespace modelplane::agent {

FetchEngine::Run::Choice FetchEngine::Run::ChooseSource(Blob& blob) {
  const auto now = clock_.Now();
  std::vector<std::pair<int, std::size_t>> candidates;  // (rank, index)
  {
    std::lock_guard lock(blob.mutex);
    const std::size_t count = sources_.size();
    if (blob.sources.size() < count) blob.sources.resize(count);
    for (std::size_t index = 0; index < count; ++index) {
      BlobSource& state = blob.sources[index];
      if (state.excluded) continue;
      const RangeSource& source = sources_.at(index);
      if (!source.MayHold(blob.digest)) continue;
      if (!health_.MayServe(source.name(), blob.digest)) {
        state.excluded = true;
        continue;
      }
      candidates.emplace_back(SourceRank(source, blob.digest), index);
    }
  }
  if (candidates.empty()) return {};
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [rank, index] : candidates) {
    {
      std::lock_guard lock(blob.mutex);
      if (now < blob.sources[index].not_before) continue;
    }
    if (sources_.TryAcquire(index)) return {.kind = Choice::Kind::kRead, .source = index};
  }
  return {.kind = Choice::Kind::kWait};
}

bool FetchEngine::Run::AnotherSourceMayServe(Blob& blob, std::size_t except) {
  std::lock_guard lock(blob.mutex);
  for (std::size_t index = 0; index < blob.sources.size(); ++index) {
    if (index == except || blob.sources[index].excluded) continue;
    const RangeSource& source = sources_.at(index);
    if (source.MayHold(blob.digest) && health_.MayServe(source.name(), blob.digest)) return true;
  }
  return false;
}

void FetchEngine::Run::ExcludeSource(Blob& blob, std::size_t source, const core::Error& error) {
  RangeSource& reader = sources_.at(source);
  {
    std::lock_guard lock(blob.mutex);
    if (blob.sources.size() <= source) blob.sources.resize(source + 1);
    if (blob.sources[source].excluded) return;
    blob.sources[source].excluded = true;
    blob.report.problems.push_back(fmt::format("{}: {}", reader.name(), error.ToString()));
    blob.report.source_failures.push_back(
        {.source = std::string(reader.name()), .code = error.code()});
  }
  Log(core::LogLevel::kWarn, "source_failed_for_file",
      {{"path", blob.path},
       {"source", reader.name()},
       {"tier", reader.tier()},
       {"error", error.ToString()},
       {"action", "fall back to the next source"}});
}

core::Status FetchEngine::Run::ReadRange(Blob& blob, std::size_t index,
                                         std::span<std::byte> bytes) {
  const PartialBlob& partial = *blob.partial;
  int attempts = 0;
  auto waiting_since = clock_.Now();
  while (true) {
    const Choice choice = ChooseSource(blob);
    if (choice.kind == Choice::Kind::kNoneLeft) {
      std::string problems;
      std::lock_guard lock(blob.mutex);
      for (const std::string& problem : blob.report.problems) problems += "; " + problem;
      return std::unexpected(
          core::Error(core::ErrorCode::kUnavailable,
                      fmt::format("no source left for {}{}", blob.path, problems), false));
    }
    if (choice.kind == Choice::Kind::kWait) {
      if (clock_.Now() - waiting_since > options_.source_wait_limit) {
        return std::unexpected(core::Error(
            core::ErrorCode::kUnavailable,
            fmt::format("no source could serve {} within {} s", blob.path,
                        std::chrono::duration_cast<std::chrono::seconds>(options_.source_wait_limit)
                            .count()),
            false));
      }
      if (!sources_.WaitForChange(run_cancel_, options_.source_poll)) {
        return core::MakeError(core::ErrorCode::kCancelled, "stopped");
      }
      continue;
    }
    const std::size_t source = choice.source;
    RangeSource& reader = sources_.at(source);
    const auto started = clock_.Now();
    const auto measured_from = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point first_byte{};
    const ReadContext context{.deadline = started + options_.range_timeout,
                              .clock = &clock_,
                              .cancel = &run_cancel_,
                              .first_byte = &first_byte};
    if (metrics_ != nullptr) metrics_->InFlight(1);
    const core::Status read =
        reader.ReadRange(SourceFile{.path = blob.path, .sha256 = blob.digest, .size = blob.size},
                         partial.RangeOffset(index), bytes, context);
    if (metrics_ != nullptr) metrics_->InFlight(-1);
    std::optional<std::chrono::milliseconds> ttfb;
    if (first_byte != std::chrono::steady_clock::time_point{}) {
      ttfb = std::chrono::duration_cast<std::chrono::milliseconds>(first_byte - measured_from);
    }
    if (read) {
      sources_.Release(source, RequestOutcome::kOk, bytes.size(), ttfb, std::nullopt);
      if (reader.tier() != core::api::kTierPeer) health_.ReportRangeOutcome(reader.name(), true);
      if (metrics_ != nullptr) {
        metrics_->RangeDone(reader.tier(), reader.name(), bytes.size(),
                            SecondsBetween(started, clock_.Now()));
      }
      std::lock_guard lock(blob.mutex);
      blob.contributors.insert(source);
      blob.report.bytes_by_source[std::string(reader.name())] += bytes.size();
      const WallTime now = WallNow();
      if (!blob.report.times.first_byte) blob.report.times.first_byte = now;
      blob.report.times.last_byte = now;
      return core::Ok();
    }
    const core::Error& error = read.error();
    if (run_cancel_.cancelled()) {
      sources_.Release(source, std::nullopt, 0, std::nullopt, std::nullopt);
      return core::MakeError(core::ErrorCode::kCancelled, "stopped");
    }
    sources_.Release(source, OutcomeOf(error), 0, ttfb, error.retry_after());
    if (error.code() == core::ErrorCode::kNotFound && reader.MayHoldLater(blob.digest)) {
      // A peer staging the blob has not finished it: ask again later, no attempt spent.
      std::lock_guard lock(blob.mutex);
      blob.sources[source].not_before = clock_.Now() + options_.source_poll;
      continue;
    }
    {
      std::lock_guard lock(last_range_error_mutex_);
      last_range_error_ = fmt::format("{} {}", reader.name(), error.ToString());
    }
    if (reader.tier() != core::api::kTierPeer) health_.ReportRangeOutcome(reader.name(), false);
    if (metrics_ != nullptr) metrics_->RangeFailed(reader.tier(), reader.name(), error.code());
    waiting_since = clock_.Now();
    if (error.code() == core::ErrorCode::kDeadlineExceeded) {
      // A stalled source: one deadline is enough to leave it alone for every file. It is not
      // given up on, so a range whose only source it is waits the cool-down out.
      sources_.CoolDown(source);
      Log(core::LogLevel::kWarn, "source_cooled_down",
          {{"path", blob.path},
           {"source", reader.name()},
           {"seconds", std::chrono::duration<double>(options_.stall_cooldown).count()},
           {"error", error.ToString()}});
      attempts = 0;
      continue;
    }
    if (!ShouldRetry(blob, index, source, error, attempts)) {
      return core::MakeError(core::ErrorCode::kCancelled, "stopped");
    }
  }
}

// After a failed read: waits out the backoff before a retry, or gives the source up for this
// file so another serves. False when the fetch stopped meanwhile.
bool FetchEngine::Run::ShouldRetry(Blob& blob, std::size_t index, std::size_t source,
                                   const core::Error& error, int& attempts) {
  RangeSource& reader = sources_.at(source);
  const bool within_attempts = attempts + 1 < options_.attempts_per_source;
  if (error.retryable() && (within_attempts || !AnotherSourceMayServe(blob, source)) &&
      sources_.SpendRetry(source)) {
    ++attempts;
    thread_local std::mt19937_64 random{std::random_device{}()};
    const core::ExponentialBackoff backoff{.initial = options_.backoff_base,
                                           .max = options_.backoff_max};
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        backoff.Jittered(std::min(attempts, 16), random));
    if (error.retry_after()) wait = std::max(wait, *error.retry_after());
    Log(core::LogLevel::kDebug, "range_retried",
        {{"path", blob.path},
         {"range", index},
         {"source", reader.name()},
         {"attempt", attempts},
         {"error", error.ToString()}});
    return run_cancel_.SleepFor(clock_, wait);
  }
  attempts = 0;
  ExcludeSource(blob, source, error);
  return !run_cancel_.cancelled();
}

}  // namespace modelplane::agent
