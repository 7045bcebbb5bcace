// The private half of FetchEngine: one Fetch call (FetchEngine::Run), its blobs, its scheduler
// and its worker threads. fetch_run.cc runs a fetch (preparing blobs, workers, hashing,
// publishing, the report); fetch_run_reads.cc reads one range (choosing a source, waiting,
// retrying, giving sources up). Only the fetch engine's own sources include it.
// Thread safety: see fetch_engine.h; a Run lives for one Fetch call.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "node-agent/fetch/fetch_engine.h"
#include "node-agent/fetch/goodput_meter.h"
#include "node-agent/fetch/ordered_hasher.h"
#include "node-agent/fetch/range_scheduler.h"
#include "node-agent/fetch/run_sources.h"

namespace modelplane::agent {

[[nodiscard]] inline double SecondsBetween(std::chrono::steady_clock::time_point from,
                                           std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

class FetchEngine::Run {
 public:
  Run(const FetchEngine& engine, const FetchRequest& request, core::CancellationToken& cancel,
      const ProgressCallback& progress)
      : options_(engine.options_),
        store_(*engine.dependencies_.store),
        health_(*engine.dependencies_.health),
        metrics_(engine.dependencies_.metrics),
        logger_(engine.dependencies_.logger),
        clock_(*engine.dependencies_.clock),
        pool_(*engine.pool_),
        request_(request),
        progress_(progress),
        outer_cancel_(cancel),
        write_throttle_(engine.dependencies_.write_throttle),
        sources_(request.sources, request.more_sources, engine.dependencies_.admission,
                 engine.dependencies_.telemetry, clock_,
                 {.stall_cooldown = options_.stall_cooldown, .retry_quota = options_.retry_quota}) {
  }

  core::Result<FetchReport> Execute(FetchReport* report_out);

 private:
  // What one blob knows of one source.
  struct BlobSource {
    bool excluded = false;                 // given up on for this blob
    core::Clock::SteadyTime not_before{};  // a staging peer said "not yet"
  };
  struct Blob {
    std::size_t id = 0;  // index in blobs_ and in the scheduler
    core::Sha256Bytes digest{};
    std::uint64_t size = 0;
    std::string path;                // the first path naming it; sources look it up by this
    std::vector<std::size_t> files;  // indexes into report_.files
    // Replaced only when the file starts over, when none of its ranges is in flight.
    std::unique_ptr<PartialBlob> partial;
    std::unique_ptr<OrderedHasher> hasher;

    std::mutex mutex;  // guards what follows
    bool done = false;
    bool failed = false;
    std::vector<BlobSource> sources;  // per source index, grown as sources are added
    std::set<std::size_t> contributors;
    // Set when a mismatch threw the resumed ranges away: the next mismatch is the sources'.
    bool resumed_discarded = false;
    FileReport report;  // copied to every file that names this blob
  };

  [[nodiscard]] core::Status Prepare();
  [[nodiscard]] core::Result<std::unique_ptr<PartialBlob>> BeginBlob(const Blob& blob);
  [[nodiscard]] std::vector<std::size_t> MissingRanges(const Blob& blob) const;
  // Sets up the scheduler; returns how many ranges the files to stage have (all may need
  // fetching: a resumed file whose digest fails starts over).
  [[nodiscard]] std::size_t Start();
  void Worker();
  void FetchRange(Blob& blob, std::size_t index, BufferLease lease);
  [[nodiscard]] core::Status ReadRange(Blob& blob, std::size_t index, std::span<std::byte> bytes);
  [[nodiscard]] bool ShouldRetry(Blob& blob, std::size_t index, std::size_t source,
                                 const core::Error& error, int& attempts);
  void Landed(Blob& blob, const OrderedHasher::Outcome& outcome);
  void FinishBlob(Blob& blob);
  void FailBlob(Blob& blob, const core::Error& error);
  // What a range may do next: read from a source (its slot taken), wait, or give up.
  struct Choice {
    enum class Kind { kRead, kWait, kNoneLeft } kind = Kind::kNoneLeft;
    std::size_t source = 0;
  };
  [[nodiscard]] Choice ChooseSource(Blob& blob);
  // Whether a source other than `except` may still serve the blob (now or later).
  [[nodiscard]] bool AnotherSourceMayServe(Blob& blob, std::size_t except);
  void ExcludeSource(Blob& blob, std::size_t source, const core::Error& error);
  void WaitUntilSettled();
  // Measures goodput, reports progress, and fails the fetch past its floor or its deadline.
  void Supervise(GoodputMeter& meter, core::Clock::SteadyTime started);
  void Cleanup();
  void BuildReport();
  void Log(core::LogLevel level, std::string_view event,
           std::initializer_list<core::LogField> fields) const {
    if (logger_ != nullptr) logger_->Log(level, event, fields);
  }
  [[nodiscard]] WallTime WallNow() const { return clock_.WallNow(); }

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
  core::ByteThrottle* write_throttle_;

  std::vector<std::unique_ptr<Blob>> blobs_;
  FetchReport report_;
  std::atomic<std::uint64_t> done_bytes_{0};

  RunSources sources_;

  std::mutex mutex_;                      // guards what follows
  std::condition_variable work_changed_;  // workers: a range may be ready, or stop
  std::condition_variable blob_settled_;  // the caller: a blob published, or failure
  std::optional<RangeScheduler> scheduler_;
  std::size_t blobs_remaining_ = 0;
  std::optional<core::Error> failure_;
  bool stop_ = false;

  std::mutex last_range_error_mutex_;
  std::string last_range_error_;  // what a source last answered to a failed read, for "why"
  std::string pace_verdict_;      // FetchReport::pace_verdict; written by the supervising thread
};

}  // namespace modelplane::agent
