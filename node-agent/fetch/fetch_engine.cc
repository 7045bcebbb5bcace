#include "node-agent/fetch/fetch_engine.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/api/model_revision.h"
#include "core/digest/sha256.h"

namespace modelplane::agent {
namespace {

constexpr std::size_t kReadBackChunk = 1 << 20;

double SecondsBetween(std::chrono::steady_clock::time_point from,
                      std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

// One Fetch call: its blobs, its queue of ranges and its worker threads.
class FetchEngine::Run {
 public:
  Run(const FetchEngine& engine, const FetchRequest& request, core::CancellationToken& cancel,
      const ProgressCallback& progress)
      : engine_(engine),
        options_(engine.options_),
        store_(*engine.dependencies_.store),
        health_(*engine.dependencies_.health),
        metrics_(engine.dependencies_.metrics),
        logger_(engine.dependencies_.logger),
        clock_(*engine.dependencies_.clock),
        pool_(*engine.pool_),
        request_(request),
        progress_(progress),
        outer_cancel_(cancel) {}

  core::Result<FetchReport> Execute(FetchReport* report_out);

 private:
  struct Blob {
    core::Sha256Bytes digest{};
    std::uint64_t size = 0;
    std::string path;                // the first path naming it; sources look it up by this
    std::vector<std::size_t> files;  // indexes into report_.files
    std::unique_ptr<PartialBlob> partial;
    std::mutex mutex;
    std::optional<core::Sha256> hasher;
    std::size_t next_hash = 0;
    std::map<std::size_t, BufferLease> parked;
    bool hashing = false;
    bool finishing = false;  // the last range was hashed; FinishBlob runs once per generation
    bool done = false;
    bool failed = false;
    std::vector<bool> excluded;  // per source index
    std::set<std::size_t> contributors;
    std::uint32_t generation = 0;
    FileReport report;  // copied to every file that names this blob
  };
  struct RangeTask {
    Blob* blob = nullptr;
    std::size_t index = 0;
    std::uint32_t generation = 0;
    int attempts = 0;
  };

  [[nodiscard]] core::Status Prepare();
  [[nodiscard]] core::Result<std::unique_ptr<PartialBlob>> BeginBlob(const Blob& blob);
  void EnqueueMissingRanges(Blob& blob, bool front);
  void Worker();
  void Process(RangeTask task);
  void HandleRangeError(RangeTask task, std::size_t source, const core::Error& error);
  void AfterRangeWritten(Blob& blob, std::uint32_t generation, std::size_t index,
                         BufferLease lease);
  void FinishBlob(Blob& blob);
  void FailBlob(Blob& blob, const core::Error& error);
  [[nodiscard]] std::optional<std::size_t> ChooseSource(Blob& blob);
  [[nodiscard]] bool AcquireSlot(std::size_t source);
  void ReleaseSlot(std::size_t source);
  void Requeue(RangeTask task);
  void Cleanup();
  void BuildReport();
  void Log(core::LogLevel level, std::string_view event,
           std::initializer_list<core::LogField> fields) const {
    if (logger_ != nullptr) logger_->Log(level, event, fields);
  }
  [[nodiscard]] WallTime WallNow() const { return clock_.WallNow(); }

  const FetchEngine& engine_;
  const FetchOptions& options_;
  CacheStore& store_;
  SourceHealth& health_;
  const FetchMetrics* metrics_;
  const core::Logger* logger_;
  const core::Clock& clock_;
  BufferPool& pool_;
  const FetchRequest& request_;
  const ProgressCallback& progress_;
  core::CancellationToken& outer_cancel_;
  core::CancellationToken run_cancel_;  // fired on failure or when the caller cancels

  std::vector<std::unique_ptr<Blob>> blobs_;
  FetchReport report_;
  std::atomic<std::uint64_t> done_bytes_{0};
  std::atomic<std::size_t> parked_total_{0};

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<RangeTask> queue_;
  std::vector<std::size_t> slots_in_use_;
  std::size_t blobs_remaining_ = 0;
  std::size_t files_done_ = 0;
  std::optional<core::Error> failure_;
  bool stop_ = false;
};

core::Result<std::unique_ptr<FetchEngine>> FetchEngine::Create(FetchOptions options,
                                                               Dependencies dependencies) {
  if (options.range_size == 0 || options.range_size % kDirectIoAlignment != 0) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           fmt::format("range size {} must be a positive multiple of {}",
                                       options.range_size, kDirectIoAlignment));
  }
  if (options.buffer_pool_bytes < options.range_size || options.max_in_flight == 0 ||
      options.attempts_per_source < 1) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "the buffer pool must hold at least one range, and in-flight and "
                           "attempt limits must be positive");
  }
  if (dependencies.store == nullptr || dependencies.health == nullptr ||
      dependencies.clock == nullptr) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "the fetch engine needs a store, a source health record and a clock");
  }
  auto pool = BufferPool::Create(
      options.range_size, static_cast<std::size_t>(options.buffer_pool_bytes / options.range_size));
  if (!pool) return std::unexpected(pool.error());
  return std::unique_ptr<FetchEngine>(
      new FetchEngine(std::move(options), dependencies, std::move(*pool)));
}

FetchEngine::FetchEngine(FetchOptions options, Dependencies dependencies,
                         std::unique_ptr<BufferPool> pool)
    : options_(std::move(options)), dependencies_(dependencies), pool_(std::move(pool)) {}

FetchEngine::~FetchEngine() = default;

core::Result<FetchReport> FetchEngine::Fetch(const FetchRequest& request,
                                             core::CancellationToken& cancel,
                                             const ProgressCallback& progress,
                                             FetchReport* report_out) {
  Run run(*this, request, cancel, progress);
  return run.Execute(report_out);
}

core::Result<std::unique_ptr<PartialBlob>> FetchEngine::Run::BeginBlob(const Blob& blob) {
  // Another fetch in this process may be staging the same blob (two revisions sharing a file):
  // wait for it to publish or give up, then take over.
  while (true) {
    auto partial = store_.BeginBlob(blob.digest, blob.size, options_.range_size);
    if (partial || partial.error().code() != core::ErrorCode::kConflict) return partial;
    if (!outer_cancel_.SleepFor(std::chrono::milliseconds(100))) {
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
    blob->digest = file.sha256;
    blob->size = file.size;
    blob->path = file.path;
    blob->files.push_back(report_.files.size() - 1);
    blob->excluded.assign(request_.sources.size(), false);
    blob->report.times.queued = report_.times.queued;
    by_digest.emplace(file.sha256, blob.get());
    blobs_.push_back(std::move(blob));
  }
  slots_in_use_.assign(request_.sources.size(), 0);

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
    if (request_.sources.empty()) {
      return core::MakeError(
          core::ErrorCode::kInvalidArgument,
          fmt::format("{} is not in the cache and no source was given", blob->path));
    }
    auto partial = BeginBlob(*blob);
    if (!partial) return std::unexpected(partial.error().Wrap("staging " + blob->path));
    blob->partial = std::move(*partial);
    blob->hasher.emplace(*core::Sha256::Create());
    std::uint64_t resumed = 0;
    for (std::size_t index = 0; index < blob->partial->range_count(); ++index) {
      if (blob->partial->IsRangeDone(index)) resumed += blob->partial->RangeLength(index);
    }
    blob->report.resumed_bytes = resumed;
    report_.resumed_bytes += resumed;
    done_bytes_ += resumed;
    if (metrics_ != nullptr && resumed > 0) metrics_->ResumedBytes(resumed);
    ++blobs_remaining_;
  }
  return core::Ok();
}

void FetchEngine::Run::EnqueueMissingRanges(Blob& blob, bool front) {
  std::vector<RangeTask> tasks;
  for (std::size_t index = 0; index < blob.partial->range_count(); ++index) {
    if (!blob.partial->IsRangeDone(index)) {
      tasks.push_back({.blob = &blob, .index = index, .generation = blob.generation});
    }
  }
  std::lock_guard lock(mutex_);
  if (front) {
    queue_.insert(queue_.begin(), tasks.begin(), tasks.end());
  } else {
    queue_.insert(queue_.end(), tasks.begin(), tasks.end());
  }
  changed_.notify_all();
}

core::Result<FetchReport> FetchEngine::Run::Execute(FetchReport* report_out) {
  const auto started = clock_.Now();
  core::ScopedCancellationCallback forward(outer_cancel_, [this] { run_cancel_.Cancel(); });
  core::Status prepared = Prepare();
  if (prepared) {
    for (auto& blob : blobs_) {
      if (!blob->done) EnqueueMissingRanges(*blob, false);
    }
    std::vector<std::jthread> workers;
    const std::size_t thread_count = std::max<std::size_t>(
        1, std::min(options_.max_in_flight, std::max<std::size_t>(1, queue_.size())));
    // Empty blobs only need their (empty) hash finished, resumed ones their resumed ranges
    // hashed. Chosen before the workers start: once they run, a blob's staging may be published
    // and gone at any moment.
    std::vector<Blob*> empty;
    std::vector<std::pair<Blob*, std::uint32_t>> resumed;
    for (auto& blob : blobs_) {
      if (blob->done) continue;
      if (blob->partial->range_count() == 0) {
        empty.push_back(blob.get());
      } else if (blob->partial->resumed_ranges() > 0) {
        resumed.emplace_back(blob.get(), blob->generation);
      }
    }
    if (blobs_remaining_ > 0) {
      for (std::size_t index = 0; index < thread_count; ++index) {
        workers.emplace_back([this] { Worker(); });
      }
      for (Blob* blob : empty) FinishBlob(*blob);  // no range of it is queued
      // Under the blob's lock this stops if workers already finished or restarted the blob.
      for (auto [blob, generation] : resumed) {
        AfterRangeWritten(*blob, generation, std::numeric_limits<std::size_t>::max(),
                          BufferLease());
      }
    }
    {
      std::unique_lock lock(mutex_);
      while (blobs_remaining_ > 0 && !failure_ && !run_cancel_.cancelled()) {
        changed_.wait_for(lock, std::chrono::milliseconds(250));
        if (progress_) {
          const FetchProgress snapshot{.total_bytes = report_.total_bytes,
                                       .done_bytes = done_bytes_.load(),
                                       .files_total = blobs_.size(),
                                       .files_done = blobs_.size() - blobs_remaining_};
          lock.unlock();
          progress_(snapshot);
          lock.lock();
        }
      }
      if (!failure_ && blobs_remaining_ > 0) {
        failure_ = core::Error(core::ErrorCode::kCancelled, "the fetch was cancelled", false);
      }
      stop_ = true;
      changed_.notify_all();
    }
    if (failure_) run_cancel_.Cancel();  // ends reads in flight
    workers.clear();                     // joins
  } else {
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
       {"tier", report_.tier},
       {"seconds", seconds}});
  if (report_out != nullptr) *report_out = report_;
  return report_;
}

void FetchEngine::Run::Worker() {
  while (true) {
    RangeTask task;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      task = queue_.front();
      queue_.pop_front();
    }
    Process(task);
  }
}

std::optional<std::size_t> FetchEngine::Run::ChooseSource(Blob& blob) {
  std::lock_guard lock(blob.mutex);
  for (std::size_t index = 0; index < request_.sources.size(); ++index) {
    if (blob.excluded[index]) continue;
    if (!health_.MayServe(request_.sources[index]->name(), blob.digest)) {
      blob.excluded[index] = true;
      continue;
    }
    return index;
  }
  return std::nullopt;
}

bool FetchEngine::Run::AcquireSlot(std::size_t source) {
  const std::size_t limit = std::max<std::size_t>(1, request_.sources[source]->max_concurrency());
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return stop_ || slots_in_use_[source] < limit; });
  if (stop_) return false;
  ++slots_in_use_[source];
  return true;
}

void FetchEngine::Run::ReleaseSlot(std::size_t source) {
  {
    std::lock_guard lock(mutex_);
    --slots_in_use_[source];
  }
  changed_.notify_all();
}

void FetchEngine::Run::Requeue(RangeTask task) {
  std::lock_guard lock(mutex_);
  queue_.push_front(task);
  changed_.notify_all();
}

void FetchEngine::Run::Process(RangeTask task) {
  Blob& blob = *task.blob;
  {
    std::lock_guard lock(blob.mutex);
    if (blob.done || blob.failed || task.generation != blob.generation) return;
  }
  const std::optional<std::size_t> source = ChooseSource(blob);
  if (!source) {
    std::string problems;
    {
      std::lock_guard lock(blob.mutex);
      for (const std::string& problem : blob.report.problems) problems += "; " + problem;
    }
    FailBlob(blob, core::Error(core::ErrorCode::kUnavailable,
                               fmt::format("no source left for {}{}", blob.path, problems), false));
    return;
  }
  if (!AcquireSlot(*source)) return;
  auto lease = pool_.Acquire(run_cancel_);
  if (!lease) {
    ReleaseSlot(*source);
    return;
  }
  RangeSource& reader = *request_.sources[*source];
  PartialBlob& partial = *blob.partial;
  const std::uint64_t length = partial.RangeLength(task.index);
  const std::span<std::byte> destination = lease->bytes().first(static_cast<std::size_t>(length));
  const auto started = clock_.Now();
  const ReadContext context{.deadline = started + options_.range_timeout, .cancel = &run_cancel_};
  if (metrics_ != nullptr) metrics_->InFlight(1);
  const core::Status read =
      reader.ReadRange(SourceFile{.path = blob.path, .sha256 = blob.digest, .size = blob.size},
                       partial.RangeOffset(task.index), destination, context);
  if (metrics_ != nullptr) metrics_->InFlight(-1);
  ReleaseSlot(*source);
  if (!read) {
    lease->Return();
    HandleRangeError(task, *source, read.error());
    return;
  }
  const auto finished = clock_.Now();
  if (metrics_ != nullptr) {
    metrics_->RangeDone(reader.tier(), reader.name(), length, SecondsBetween(started, finished));
  }
  {
    std::lock_guard lock(blob.mutex);
    blob.contributors.insert(*source);
    blob.report.bytes_by_source[std::string(reader.name())] += length;
    const WallTime now = WallNow();
    if (!blob.report.times.first_byte) blob.report.times.first_byte = now;
    blob.report.times.last_byte = now;
  }
  if (auto written = partial.WriteRange(task.index, destination, lease->capacity()); !written) {
    FailBlob(blob, written.error());
    return;
  }
  if (auto marked = partial.MarkRangeDone(task.index); !marked) {
    FailBlob(blob, marked.error());
    return;
  }
  done_bytes_ += length;
  AfterRangeWritten(blob, task.generation, task.index, std::move(*lease));
}

void FetchEngine::Run::HandleRangeError(RangeTask task, std::size_t source,
                                        const core::Error& error) {
  RangeSource& reader = *request_.sources[source];
  if (run_cancel_.cancelled()) return;
  if (metrics_ != nullptr) metrics_->RangeFailed(reader.tier(), reader.name(), error.code());
  Blob& blob = *task.blob;
  if (error.retryable() && task.attempts + 1 < options_.attempts_per_source) {
    ++task.attempts;
    thread_local std::mt19937_64 random{std::random_device{}()};
    const auto ceiling =
        std::min(options_.backoff_max, options_.backoff_base * (1 << task.attempts));
    const auto wait = std::chrono::milliseconds(std::uniform_int_distribution<std::int64_t>(
        ceiling.count() / 2, std::max<std::int64_t>(ceiling.count() / 2, ceiling.count()))(random));
    Log(core::LogLevel::kDebug, "range_retried",
        {{"path", blob.path},
         {"range", task.index},
         {"source", reader.name()},
         {"attempt", task.attempts},
         {"error", error.ToString()}});
    if (!run_cancel_.SleepFor(wait)) return;
    Requeue(task);
    return;
  }
  {
    std::lock_guard lock(blob.mutex);
    if (!blob.excluded[source]) {
      blob.excluded[source] = true;
      blob.report.problems.push_back(fmt::format("{}: {}", reader.name(), error.ToString()));
    }
  }
  Log(core::LogLevel::kWarn, "source_failed_for_file",
      {{"path", blob.path},
       {"source", reader.name()},
       {"tier", reader.tier()},
       {"error", error.ToString()},
       {"action", "fall back to the next source"}});
  task.attempts = 0;
  Requeue(task);
}

void FetchEngine::Run::AfterRangeWritten(Blob& blob, std::uint32_t generation, std::size_t index,
                                         BufferLease lease) {
  std::unique_lock lock(blob.mutex);
  // A range of an earlier generation (before a refetch) carries bytes of a barred source.
  if (blob.done || blob.failed || blob.finishing || generation != blob.generation) return;
  const std::size_t count = blob.partial->range_count();
  if (lease.valid() && index >= blob.next_hash) {
    // Park the buffer for the hash unless too many are parked: then the range is read back
    // from the staging file later, and the buffer serves a range that may unblock the hash.
    if (index == blob.next_hash || parked_total_.load() < pool_.buffer_count() / 2) {
      blob.parked.emplace(index, std::move(lease));
      ++parked_total_;
    }
  }
  if (blob.hashing) return;
  blob.hashing = true;
  std::vector<std::byte> scratch;
  while (blob.next_hash < count) {
    const std::size_t next = blob.next_hash;
    BufferLease buffer;
    if (auto parked = blob.parked.find(next); parked != blob.parked.end()) {
      buffer = std::move(parked->second);
      blob.parked.erase(parked);
      --parked_total_;
    } else if (!blob.partial->IsRangeDone(next)) {
      break;
    }
    const std::uint64_t length = blob.partial->RangeLength(next);
    const std::uint64_t offset = blob.partial->RangeOffset(next);
    lock.unlock();
    core::Status hashed = core::Ok();
    if (buffer.valid()) {
      blob.hasher->Update(buffer.bytes().first(static_cast<std::size_t>(length)));
      buffer.Return();
    } else {
      if (scratch.empty()) scratch.resize(kReadBackChunk);
      for (std::uint64_t done = 0; done < length && hashed;) {
        const std::size_t chunk =
            static_cast<std::size_t>(std::min<std::uint64_t>(kReadBackChunk, length - done));
        hashed = blob.partial->ReadBack(offset + done, std::span(scratch).first(chunk));
        if (hashed) blob.hasher->Update(std::span<const std::byte>(scratch).first(chunk));
        done += chunk;
      }
    }
    lock.lock();
    if (!hashed) {
      blob.hashing = false;
      lock.unlock();
      FailBlob(blob, hashed.error());
      return;
    }
    // While this range was read back from disk, its own worker may have parked its buffer
    // (it saw index == next_hash). That copy is hashed already: drop it, or a refetch after a
    // mismatch would hash this stale buffer.
    if (auto stale = blob.parked.find(next); stale != blob.parked.end()) {
      blob.parked.erase(stale);
      --parked_total_;
    }
    ++blob.next_hash;
  }
  blob.hashing = false;
  const bool complete = blob.next_hash == count;
  if (complete) blob.finishing = true;
  lock.unlock();
  if (complete) FinishBlob(blob);
}

void FetchEngine::Run::FinishBlob(Blob& blob) {
  const core::Sha256Bytes computed = blob.hasher->Finish();
  blob.report.times.verified = WallNow();
  std::set<std::size_t> contributors;
  {
    std::lock_guard lock(blob.mutex);
    contributors = blob.contributors;
  }
  core::Status published = store_.PublishBlob(std::move(blob.partial), computed);
  if (published) {
    {
      std::lock_guard lock(blob.mutex);
      blob.done = true;
      blob.report.times.published = WallNow();
    }
    std::lock_guard lock(mutex_);
    --blobs_remaining_;
    changed_.notify_all();
    return;
  }
  if (published.error().code() != core::ErrorCode::kDataLoss) {
    FailBlob(blob, published.error());
    return;
  }
  // The bytes do not match: every source that served part of them is suspect.
  std::vector<std::string> blamed;
  for (std::size_t source : contributors) {
    RangeSource& reader = *request_.sources[source];
    health_.ReportBadBytes(reader.name(), reader.tier(), blob.digest);
    if (metrics_ != nullptr) metrics_->Quarantined(reader.tier(), reader.name());
    blamed.emplace_back(reader.name());
  }
  {
    std::lock_guard lock(blob.mutex);
    for (std::size_t source : contributors) blob.excluded[source] = true;
    blob.report.problems.push_back(published.error().message());
    ++blob.report.restarts;
    blob.report.bytes_by_source.clear();
    blob.report.resumed_bytes = 0;
  }
  Log(core::LogLevel::kError, "bad_bytes_quarantined",
      {{"path", blob.path},
       {"sha256", core::FormatDigest(blob.digest)},
       {"computed", core::FormatDigest(computed)},
       {"sources", fmt::format("{}", fmt::join(blamed, ","))},
       {"action", "refetch the file from the next source"}});
  auto partial = BeginBlob(blob);
  if (!partial) {
    FailBlob(blob, partial.error());
    return;
  }
  done_bytes_ -= std::min(done_bytes_.load(), blob.size);
  {
    std::lock_guard lock(blob.mutex);
    blob.partial = std::move(*partial);
    parked_total_ -= blob.parked.size();
    blob.parked.clear();  // nothing of the discarded generation may reach the new hash
    blob.next_hash = 0;
    blob.finishing = false;
    blob.contributors.clear();
    ++blob.generation;
    blob.hasher.emplace(*core::Sha256::Create());
  }
  EnqueueMissingRanges(blob, true);
}

void FetchEngine::Run::FailBlob(Blob& blob, const core::Error& error) {
  {
    std::lock_guard lock(blob.mutex);
    if (blob.failed || blob.done) return;
    blob.failed = true;
    blob.report.problems.push_back(error.ToString());
  }
  std::lock_guard lock(mutex_);
  if (!failure_) failure_ = error.Wrap("staging " + blob.path);
  stop_ = true;
  changed_.notify_all();
}

void FetchEngine::Run::Cleanup() {
  // Out of space: free everything this fetch holds. Otherwise keep stagings for a resume.
  const bool out_of_space = failure_ && failure_->code() == core::ErrorCode::kResourceExhausted;
  for (auto& blob : blobs_) {
    blob->parked.clear();
    if (!blob->partial) continue;
    if (out_of_space) {
      store_.AbandonBlob(std::move(blob->partial));
    } else {
      store_.SuspendBlob(std::move(blob->partial));
    }
  }
  parked_total_ = 0;
}

void FetchEngine::Run::BuildReport() {
  report_.buffer_high_water_bytes = pool_.Stats().high_water * pool_.buffer_size();
  report_.quarantines = 0;
  std::map<std::string, std::string> tier_of_source;
  for (RangeSource* source : request_.sources) {
    tier_of_source[std::string(source->name())] = std::string(source->tier());
  }
  for (auto& blob : blobs_) {
    FileReport& base = blob->report;
    report_.quarantines += base.restarts;
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
