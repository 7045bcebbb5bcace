#include "node-agent/fetch/fetch_run.h"

#include <algorithm>
#include <limits>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "core/api/model_revision.h"
#include "core/digest/sha256.h"
#include "node-agent/fetch/bad_bytes_blame.h"

namespace modelplane::agent {

core::Result<std::unique_ptr<PartialBlob>> FetchEngine::Run::BeginBlob(const Blob& blob) {
  // Another fetch in this process may be staging the same blob (two revisions sharing a file):
  // wait for it to publish or give up, then take over.
  while (true) {
    auto partial = store_.BeginBlob(blob.digest, blob.size, options_.range_size);
    if (partial || partial.error().code() != core::ErrorCode::kConflict) return partial;
    if (!outer_cancel_.SleepFor(clock_, std::chrono::milliseconds(100))) {
      return core::MakeError(core::ErrorCode::kCancelled, "cancelled while waiting for a blob");
    }
  }
}

core::Status FetchEngine::Run::Prepare() {
  report_.revision_digest = core::FormatDigest(request_.revision_digest);
  report_.name = request_.name;
  report_.times.queued = WallNow();
  std::map<core::Sha256Bytes, Blob*> by_digest;
  std::set<std::string> paths;
  for (const FetchFile& file : request_.files) {
    if (auto valid = ValidateRelativePath(file.path); !valid) return valid;
    if (!paths.insert(file.path).second) {
      return core::MakeError(core::ErrorCode::kInvalidArgument,
                             fmt::format("path {:?} appears twice", file.path));
    }
    FileReport file_report{
        .path = file.path, .sha256 = core::FormatDigest(file.sha256), .size = file.size};
    file_report.times.queued = report_.times.queued;
    report_.files.push_back(std::move(file_report));
    report_.total_bytes += file.size;
    auto existing = by_digest.find(file.sha256);
    if (existing != by_digest.end()) {
      if (existing->second->size != file.size) {
        return core::MakeError(core::ErrorCode::kInvalidArgument,
                               fmt::format("{} and {} share a sha256 but not a size",
                                           existing->second->path, file.path));
      }
      existing->second->files.push_back(report_.files.size() - 1);
      continue;
    }
    auto blob = std::make_unique<Blob>();
    blob->id = blobs_.size();
    blob->digest = file.sha256;
    blob->size = file.size;
    blob->path = file.path;
    blob->files.push_back(report_.files.size() - 1);
    blob->report.times.queued = report_.times.queued;
    by_digest.emplace(file.sha256, blob.get());
    blobs_.push_back(std::move(blob));
  }
  for (auto& blob : blobs_) {
    if (store_.HasBlob(blob->digest)) {
      blob->done = true;
      blob->report.tier = core::api::kTierLocal;
      report_.local_bytes += blob->size * blob->files.size();
      done_bytes_ += blob->size;
      if (metrics_ != nullptr) metrics_->BlobHit();
      continue;
    }
    if (metrics_ != nullptr) metrics_->BlobMiss();
    if (sources_.size() == 0) {
      return core::MakeError(
          core::ErrorCode::kInvalidArgument,
          fmt::format("{} is not in the cache and no source was given", blob->path));
    }
    auto partial = BeginBlob(*blob);
    if (!partial) return std::unexpected(partial.error().Wrap("staging " + blob->path));
    blob->partial = std::move(*partial);
    blob->hasher = std::make_unique<OrderedHasher>([this, id = blob->id](std::size_t next) {
      {
        std::lock_guard lock(mutex_);
        if (scheduler_) scheduler_->Hashed(id, next);
      }
      work_changed_.notify_one();  // one more range of this file fits its window
    });
    blob->hasher->Restart(*blob->partial);
    std::uint64_t resumed = 0;
    for (std::size_t index = 0; index < blob->partial->range_count(); ++index) {
      if (blob->partial->IsRangeDone(index)) resumed += blob->partial->RangeLength(index);
    }
    blob->report.resumed_bytes = resumed;
    done_bytes_ += resumed;
    if (metrics_ != nullptr && resumed > 0) metrics_->ResumedBytes(resumed);
    ++blobs_remaining_;
  }
  return core::Ok();
}

std::vector<std::size_t> FetchEngine::Run::MissingRanges(const Blob& blob) const {
  std::vector<std::size_t> missing;
  for (std::size_t index = 0; index < blob.partial->range_count(); ++index) {
    if (!blob.partial->IsRangeDone(index)) missing.push_back(index);
  }
  return missing;
}

std::size_t FetchEngine::Run::Start() {
  // Each file in flight gets an equal share of the pool as its window: together they can park
  // no more buffers than the pool has.
  const std::size_t files_in_flight =
      std::max<std::size_t>(1, std::min(options_.files_in_flight, blobs_remaining_));
  {
    std::lock_guard lock(mutex_);
    scheduler_.emplace(RangeScheduler::Options{.files_in_flight = files_in_flight,
                                               .window = pool_.buffer_count() / files_in_flight},
                       blobs_.size());
    std::size_t ranges = 0;
    for (auto& blob : blobs_) {
      if (blob->done) continue;
      ranges += blob->partial->range_count();
      scheduler_->SetPending(blob->id, MissingRanges(*blob), 0);
    }
    return ranges;
  }
}

core::Result<FetchReport> FetchEngine::Run::Execute(FetchReport* report_out) {
  const auto started = clock_.Now();
  core::ScopedCancellationCallback forward(outer_cancel_, [this] { run_cancel_.Cancel(); });
  // Before Prepare looks for local copies, and until the manifest is published or the fetch
  // gave up: eviction must not remove a blob this fetch counted as already here.
  std::vector<core::Sha256Bytes> wanted_blobs;
  wanted_blobs.reserve(request_.files.size());
  for (const FetchFile& file : request_.files) wanted_blobs.push_back(file.sha256);
  const BlobHold hold = store_.HoldBlobs(wanted_blobs);
  core::Status prepared = Prepare();
  if (prepared && blobs_remaining_ > 0) {
    const std::size_t ranges = Start();
    std::vector<std::jthread> workers;
    const std::size_t worker_count = std::clamp<std::size_t>(ranges, 1, options_.max_in_flight);
    for (std::size_t index = 0; index < worker_count; ++index) {
      workers.emplace_back([this] { Worker(); });
    }
    // Ranges already on disk (a resumed staging) are hashed here, from the start of each file
    // as far as they reach; empty files finish at once. Workers continue the rest.
    for (auto& blob : blobs_) {
      {
        std::lock_guard lock(blob->mutex);
        if (blob->done || blob->failed) continue;
      }
      Landed(*blob, blob->hasher->CatchUp(blob->hasher->generation()));
    }
    WaitUntilSettled();
    if (failure_) run_cancel_.Cancel();  // ends reads in flight
    workers.clear();                     // joins
  } else if (!prepared) {
    failure_ = prepared.error();
  }

  Cleanup();
  if (!failure_) {
    RevisionManifest manifest{
        .revision_digest = request_.revision_digest,
        .name = request_.name,
        .published_unix_seconds =
            std::chrono::duration_cast<std::chrono::seconds>(WallNow().time_since_epoch()).count()};
    for (const FetchFile& file : request_.files) {
      manifest.files.push_back({.path = file.path, .size = file.size, .sha256 = file.sha256});
    }
    if (auto published = store_.PublishRevision(manifest); !published) {
      failure_ = published.error();
    }
  }
  BuildReport();
  const double seconds = SecondsBetween(started, clock_.Now());
  if (failure_) {
    report_.ready = false;
    report_.error = failure_->ToString();
    Log(core::LogLevel::kError, "fetch_failed",
        {{"revision", report_.name},
         {"digest", report_.revision_digest},
         {"error", report_.error}});
    if (report_out != nullptr) *report_out = report_;
    return std::unexpected(*failure_);
  }
  report_.ready = true;
  report_.times.published = WallNow();
  for (FileReport& file : report_.files) {
    if (!file.times.published) file.times.published = report_.times.published;
  }
  if (metrics_ != nullptr && seconds > 0) {
    metrics_->FetchFinished(static_cast<double>(report_.fetched_bytes) / seconds);
    metrics_->Store(store_.Usage());
  }
  Log(core::LogLevel::kInfo, "fetch_published",
      {{"revision", report_.name},
       {"digest", report_.revision_digest},
       {"bytes", report_.total_bytes},
       {"fetched_bytes", report_.fetched_bytes},
       {"local_bytes", report_.local_bytes},
       {"resumed_bytes", report_.resumed_bytes},
       {"resumed_bytes_discarded", report_.resumed_bytes_discarded},
       {"tier", report_.tier},
       {"seconds", seconds}});
  if (report_out != nullptr) *report_out = report_;
  return report_;
}

void FetchEngine::Run::WaitUntilSettled() {
  constexpr auto kTick = std::chrono::milliseconds(250);
  const core::Clock::SteadyTime started = clock_.Now();
  GoodputMeter meter(options_.goodput_window);
  std::unique_lock lock(mutex_);
  core::Clock::SteadyTime next_tick = started;
  while (blobs_remaining_ > 0 && !failure_ && !run_cancel_.cancelled()) {
    if (clock_.Now() >= next_tick) {
      next_tick = clock_.Now() + kTick;
      lock.unlock();
      Supervise(meter, started);
      lock.lock();
      continue;
    }
    clock_.WaitUntil(lock, blob_settled_, next_tick);
  }
  if (!failure_ && blobs_remaining_ > 0) {
    failure_ = core::Error(core::ErrorCode::kCancelled, "the fetch was cancelled", false);
  }
  stop_ = true;
  work_changed_.notify_all();
  sources_.WakeAll();
}

void FetchEngine::Run::Supervise(GoodputMeter& meter, core::Clock::SteadyTime started) {
  const core::Clock::SteadyTime now = clock_.Now();
  const std::uint64_t done = done_bytes_.load();
  const std::uint64_t total = report_.total_bytes;
  meter.Sample(now, done);
  FetchProgress snapshot{.total_bytes = total,
                         .done_bytes = done,
                         .goodput_bytes_per_second = meter.BytesPerSecond(),
                         .expected_finish = meter.ExpectedFinish(total - std::min(done, total))};
  {
    std::lock_guard lock(mutex_);
    snapshot.files_total = blobs_.size();
    snapshot.files_done = blobs_.size() - blobs_remaining_;
  }
  if (progress_) progress_(snapshot);

  const bool below_floor =
      options_.min_goodput > 0 && meter.WindowCovered() &&
      snapshot.goodput_bytes_per_second.value_or(0) < static_cast<double>(options_.min_goodput);
  const bool past_deadline =
      options_.deadline > std::chrono::milliseconds::zero() && now - started >= options_.deadline;
  if (!below_floor && !past_deadline) return;
  std::string last_error;
  {
    std::lock_guard lock(last_range_error_mutex_);
    last_error = last_range_error_.empty() ? "none" : last_range_error_;
  }
  const std::string pace = fmt::format(
      "{} of {} bytes landed after {:.0f} s, {:.0f} B/s over the last {:.0f} s{}", done, total,
      SecondsBetween(started, now), snapshot.goodput_bytes_per_second.value_or(0),
      std::chrono::duration<double>(
          std::min<core::Clock::SteadyTime::duration>(now - started, options_.goodput_window))
          .count(),
      snapshot.expected_finish
          ? fmt::format(", {} s more at that pace", snapshot.expected_finish->count())
          : std::string(", no finish in sight at that pace"));
  pace_verdict_ =
      below_floor
          ? fmt::format("staging slower than the floor of {} B/s: {}", options_.min_goodput, pace)
          : fmt::format("staging not done within its deadline of {:g} s: {}",
                        std::chrono::duration<double>(options_.deadline).count(), pace);
  const std::string why =
      fmt::format("{}; the sources' last failure: {}", pace_verdict_, last_error);
  Log(core::LogLevel::kWarn, "fetch_gave_up", {{"revision", report_.name}, {"reason", why}});
  std::lock_guard lock(mutex_);
  if (!failure_) failure_ = core::Error(core::ErrorCode::kDeadlineExceeded, why, true);
  blob_settled_.notify_all();
}

void FetchEngine::Run::Worker() {
  while (true) {
    {
      std::unique_lock lock(mutex_);
      work_changed_.wait(lock, [&] { return stop_ || scheduler_->HasWork(); });
      if (stop_) return;
    }
    // The buffer comes first: a range taken is never left waiting for one (see the header).
    auto lease = pool_.Acquire(run_cancel_);
    if (!lease) return;  // cancelled
    std::optional<RangeScheduler::Task> task;
    {
      std::lock_guard lock(mutex_);
      if (stop_) return;
      task = scheduler_->Next();
    }
    if (task) FetchRange(*blobs_[task->file], task->range, std::move(*lease));
  }
}

void FetchEngine::Run::FetchRange(Blob& blob, std::size_t index, BufferLease lease) {
  {
    std::lock_guard lock(blob.mutex);
    if (blob.done || blob.failed) return;
  }
  // The range was taken in the file's current generation (a file starts over only when none
  // of its ranges is in flight), so it lands in that one.
  const std::uint32_t generation = blob.hasher->generation();
  PartialBlob& partial = *blob.partial;
  const std::uint64_t length = partial.RangeLength(index);
  const std::span<std::byte> bytes = lease.bytes().first(static_cast<std::size_t>(length));
  if (auto read = ReadRange(blob, index, bytes); !read) {
    if (read.error().code() != core::ErrorCode::kCancelled) FailBlob(blob, read.error());
    return;
  }
  // Before the file's first write, after its first read: a full disk still shows before any
  // byte of the file is written, and preallocating (which blocks the file's other writers)
  // overlaps the requests already on their way instead of delaying the first one.
  if (auto allocated = partial.Preallocate(); !allocated) {
    FailBlob(blob, allocated.error());
    return;
  }
  if (write_throttle_ != nullptr) {
    const auto wait = write_throttle_->Reserve(length);
    if (wait > std::chrono::nanoseconds(0) && !run_cancel_.SleepFor(clock_, wait)) return;
  }
  if (auto written = partial.WriteRange(index, bytes, lease.capacity()); !written) {
    FailBlob(blob, written.error());
    return;
  }
  if (auto marked = partial.MarkRangeDone(index); !marked) {
    FailBlob(blob, marked.error());
    return;
  }
  done_bytes_ += length;
  Landed(blob, blob.hasher->Land(generation, index, std::move(lease)));
}

void FetchEngine::Run::Landed(Blob& blob, const OrderedHasher::Outcome& outcome) {
  if (!outcome.status) {
    FailBlob(blob, outcome.status.error());
  } else if (outcome.complete) {
    FinishBlob(blob);
  }
}

void FetchEngine::Run::FinishBlob(Blob& blob) {
  const core::Sha256Bytes computed = blob.hasher->TakeDigest();
  std::set<std::size_t> contributors;
  {
    std::lock_guard lock(blob.mutex);
    blob.report.times.verified = WallNow();
    contributors = blob.contributors;
  }
  core::Status published = store_.PublishBlob(std::move(blob.partial), computed);
  if (published) {
    {
      std::lock_guard lock(blob.mutex);
      blob.done = true;
      blob.report.times.published = WallNow();
    }
    {
      std::lock_guard lock(mutex_);
      scheduler_->Finished(blob.id);
      --blobs_remaining_;
    }
    blob_settled_.notify_all();
    work_changed_.notify_all();  // the next file enters
    return;
  }
  if (published.error().code() != core::ErrorCode::kDataLoss) {
    FailBlob(blob, published.error());
    return;
  }
  // The bytes do not match. When part of them came from an earlier staging on this disk, that
  // partial may be what is wrong (a torn or rotted write the progress record cannot tell), and
  // blaming the sources could bar a good object store from the blob for the life of the
  // process. So the first mismatch of a resumed file blames no one: the store has quarantined
  // the whole staging, and the file starts over from byte 0 from the same sources. A mismatch
  // after that is the sources' own.
  std::uint64_t discarded = 0;
  {
    std::lock_guard lock(blob.mutex);
    if (blob.report.resumed_bytes > 0 && !blob.resumed_discarded) {
      discarded = blob.report.resumed_bytes;
      blob.resumed_discarded = true;
    }
  }
  // Otherwise the sources that answer for the bytes are quarantined for this blob.
  std::vector<std::size_t> blamed;
  if (discarded == 0) {
    blamed = ChooseBlamedSources(contributors, [&](std::size_t source) {
      return !health_.MayServe(sources_.at(source).name(), blob.digest);
    });
  }
  std::vector<std::string> blamed_names;
  for (std::size_t source : blamed) {
    RangeSource& reader = sources_.at(source);
    health_.ReportBadBytes(reader.name(), reader.tier(), blob.digest);
    if (metrics_ != nullptr) metrics_->Quarantined(reader.tier(), reader.name());
    blamed_names.emplace_back(reader.name());
  }
  {
    std::lock_guard lock(blob.mutex);
    for (std::size_t source : blamed) {
      if (blob.sources.size() <= source) blob.sources.resize(source + 1);
      blob.sources[source].excluded = true;
      blob.report.source_failures.push_back(
          {.source = std::string(sources_.at(source).name()), .code = core::ErrorCode::kDataLoss});
    }
    if (discarded > 0) {
      blob.report.problems.push_back(
          fmt::format("{}; {} of its bytes were resumed from an earlier staging, so it was "
                      "fetched again from the start without blaming a source",
                      published.error().message(), discarded));
    } else {
      blob.report.problems.push_back(published.error().message());
    }
    blob.report.resumed_bytes_discarded += discarded;
    ++blob.report.restarts;
    blob.report.bytes_by_source.clear();
    blob.report.resumed_bytes = 0;
  }
  // Only the log names the digest that was computed (see CacheStore::PublishBlob).
  if (discarded > 0) {
    if (metrics_ != nullptr) metrics_->ResumedBytesDiscarded(discarded);
    Log(core::LogLevel::kWarn, "resumed_bytes_discarded",
        {{"path", blob.path},
         {"sha256", core::FormatDigest(blob.digest)},
         {"computed", core::FormatDigest(computed)},
         {"resumed_bytes", discarded},
         {"action", "refetch the file from the start from the same sources"}});
  } else {
    Log(core::LogLevel::kError, "bad_bytes_quarantined",
        {{"path", blob.path},
         {"sha256", core::FormatDigest(blob.digest)},
         {"computed", core::FormatDigest(computed)},
         {"sources", fmt::format("{}", fmt::join(blamed_names, ","))},
         {"action", "refetch the file from the next source"}});
  }
  auto partial = BeginBlob(blob);
  if (!partial) {
    FailBlob(blob, partial.error());
    return;
  }
  done_bytes_ -= std::min(done_bytes_.load(), blob.size);
  // No range of this file is in flight now (its hash had reached the end), so its staging can
  // be replaced under the workers' feet.
  blob.partial = std::move(*partial);
  {
    std::lock_guard lock(blob.mutex);
    blob.contributors.clear();
    blob.hasher->Restart(*blob.partial);
  }
  {
    std::lock_guard lock(mutex_);
    scheduler_->SetPending(blob.id, MissingRanges(blob), 0);
  }
  work_changed_.notify_all();
}

void FetchEngine::Run::FailBlob(Blob& blob, const core::Error& error) {
  {
    std::lock_guard lock(blob.mutex);
    if (blob.failed || blob.done) return;
    blob.failed = true;
    blob.report.problems.push_back(error.ToString());
  }
  {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = error.Wrap("staging " + blob.path);
    stop_ = true;
  }
  blob_settled_.notify_all();
  work_changed_.notify_all();
  sources_.WakeAll();
}

void FetchEngine::Run::Cleanup() {
  // Out of space: free everything this fetch holds. Otherwise keep stagings for a resume.
  const bool out_of_space = failure_ && failure_->code() == core::ErrorCode::kResourceExhausted;
  for (auto& blob : blobs_) {
    blob->hasher.reset();  // returns parked buffers
    if (!blob->partial) continue;
    if (out_of_space) {
      store_.AbandonBlob(std::move(blob->partial));
    } else {
      store_.SuspendBlob(std::move(blob->partial));
    }
  }
}

void FetchEngine::Run::BuildReport() {
  report_.pace_verdict = pace_verdict_;
  report_.buffer_high_water_bytes = pool_.Stats().high_water * pool_.buffer_size();
  report_.quarantines = 0;
  // Counted again here: a file that started over after a mismatch kept none of what it resumed.
  report_.resumed_bytes = 0;
  report_.resumed_bytes_discarded = 0;
  std::map<std::string, std::string> tier_of_source;
  for (std::size_t index = 0; index < sources_.size(); ++index) {
    const RangeSource& source = sources_.at(index);
    tier_of_source[std::string(source.name())] = std::string(source.tier());
  }
  for (auto& blob : blobs_) {
    FileReport& base = blob->report;
    report_.quarantines += base.restarts;
    report_.resumed_bytes += base.resumed_bytes;
    report_.resumed_bytes_discarded += base.resumed_bytes_discarded;
    if (base.tier.empty()) {
      std::map<std::string, std::uint64_t> by_tier;
      for (const auto& [source, bytes] : base.bytes_by_source)
        by_tier[tier_of_source[source]] += bytes;
      auto best =
          std::max_element(by_tier.begin(), by_tier.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; });
      base.tier = best == by_tier.end() ? std::string(core::api::kTierLocal) : best->first;
    }
    for (const auto& [source, bytes] : base.bytes_by_source) {
      report_.bytes_by_tier[tier_of_source[source]] += bytes;
      report_.fetched_bytes += bytes;
    }
    for (std::size_t file_index : blob->files) {
      FileReport& file = report_.files[file_index];
      const std::string path = file.path;
      const std::string sha = file.sha256;
      file = base;
      file.path = path;
      file.sha256 = sha;
      file.size = blob->size;
      auto& times = report_.times;
      if (file.times.first_byte &&
          (!times.first_byte || *file.times.first_byte < *times.first_byte)) {
        times.first_byte = file.times.first_byte;
      }
      if (file.times.last_byte && (!times.last_byte || *file.times.last_byte > *times.last_byte)) {
        times.last_byte = file.times.last_byte;
      }
      if (file.times.verified && (!times.verified || *file.times.verified > *times.verified)) {
        times.verified = file.times.verified;
      }
    }
  }
  if (report_.local_bytes > 0)
    report_.bytes_by_tier[std::string(core::api::kTierLocal)] += report_.local_bytes;
  auto best = std::max_element(report_.bytes_by_tier.begin(), report_.bytes_by_tier.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  report_.tier =
      best == report_.bytes_by_tier.end() ? std::string(core::api::kTierLocal) : best->first;
  if (!report_.times.verified && !failure_) report_.times.verified = WallNow();
}

}  // namespace modelplane::agent
