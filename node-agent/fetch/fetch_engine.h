// Stages a revision's files into the cache store from an ordered list of sources, fast and
// verified.
//
// How bytes move: each file is split into ranges (options.range_size). Worker threads (as many as
// options.max_in_flight) each borrow a buffer from the shared pool, take the next range from the
// RangeScheduler (a few files at a time, the earliest first, each within a window past its hash),
// read the range from the file's current source into the buffer, preallocate the file before its
// first write, write the range with pwrite into the staging file (O_DIRECT where allowed) and
// record it in the staging's progress. Each file's SHA-256 runs in file order as its ranges land
// (OrderedHasher), so verification costs no second read; ranges that land early wait parked with
// their buffers, and the window bounds how many. Memory is the pool, whatever the model size.
//
// Why it cannot deadlock: a worker holds its buffer from before it takes a range until the range
// is hashed, and keeps it through retries and fallbacks; ranges of a file are taken in order.
// So the range a file's hash waits for always holds a buffer already (or is complete on disk),
// whatever the other files, or other fetches sharing the pool, hold.
//
// Choosing a source, per range (node-agent/fetch/source_order.h, run_sources.h): the first, in
// the blob's order, that may hold the blob and has a free request slot: peers that hold it,
// shared filesystems, origins and object stores (remote sources also need the node's admission,
// source_admission.h), then peers still staging it. When none is free now but one may be later
// (a slot, a grant, a staging peer's "not yet", a cool-down) the range waits, up to
// options.source_wait_limit; the fetch grows its sources while it runs (FetchRequest::more).
//
// Failures: a range that fails with a retryable error is retried with jittered backoff (a
// Retry-After honoured), each retry paid from the source's retry quota, which successes refill;
// after options.attempts_per_source tries the file moves on to another source when one may
// serve it, and keeps retrying the last one while its quota lasts. Non-retryable errors (404,
// 403, truncation) move the file on at once; a 404 from a peer still staging the blob only
// means "not yet". A range past its deadline cools its source down for every file of the
// fetch. A fetch that lands less than options.min_goodput per second over a whole
// options.goodput_window (a source that trickles, or stalls after the first bytes of each
// range), or runs past options.deadline, fails with kDeadlineExceeded and says why. When a
// finished file's digest does not match, every source that served
// part of it is reported to SourceHealth (quarantined for that blob; peers cool down), the bytes
// go to the store's quarantine, and the file is fetched again from the sources left. Except the
// first mismatch of a file resumed from an earlier staging: the partial on this disk may be what
// was wrong, so no source is blamed and the file is fetched again from byte 0 from the same
// sources; only a second mismatch blames them. A file with no source left fails the fetch; the
// other files' stagings are suspended for a later resume.
//
// Thread safety: one FetchEngine may run several Fetch calls at once (they share the buffer
// pool and the store); each Fetch blocks its caller until done, failed or cancelled.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/error/error.h"
#include "core/log/logger.h"
#include "core/throttle/byte_throttle.h"
#include "node-agent/fetch/buffer_pool.h"
#include "node-agent/fetch/fetch_metrics.h"
#include "node-agent/fetch/fetch_report.h"
#include "node-agent/fetch/range_source.h"
#include "node-agent/fetch/source_admission.h"
#include "node-agent/fetch/source_health.h"
#include "node-agent/fetch/source_set.h"
#include "node-agent/fetch/source_telemetry.h"
#include "node-agent/store/cache_store.h"

namespace modelplane::agent {

struct FetchOptions {
  std::uint64_t range_size = 8ull << 20;  // a multiple of 4096
  std::size_t max_in_flight = 16;
  // Files fetched (and hashed) at once; each gets an equal share of the pool as its window.
  std::size_t files_in_flight = 8;
  std::uint64_t buffer_pool_bytes = 256ull << 20;  // at least one range
  std::chrono::milliseconds range_timeout{60'000};
  int attempts_per_source = 3;
  std::chrono::milliseconds backoff_base{100};
  std::chrono::milliseconds backoff_max{2'000};
  // Retries a source may take in one fetch beyond the first try of each range; each range it
  // serves gives one back.
  int retry_quota = 32;
  // A source that let a range pass range_timeout is left alone this long, for every file.
  std::chrono::milliseconds stall_cooldown{30'000};
  // How often a range with no source free looks again, and how long it may wait in all.
  std::chrono::milliseconds source_poll{250};
  std::chrono::milliseconds source_wait_limit{600'000};
  // Goodput (landed bytes per second, goodput_meter.h) is measured over this window. Below
  // min_goodput over a whole window the fetch gives up with kDeadlineExceeded, saying how fast
  // it went and what the sources last answered; 0: never (a slow fetch only reports).
  std::chrono::milliseconds goodput_window{60'000};
  std::uint64_t min_goodput = 0;
  // The whole fetch must be done by then (from its start); 0: no deadline.
  std::chrono::milliseconds deadline{0};
};

struct FetchFile {
  std::string path;  // validated relative path
  std::uint64_t size = 0;
  core::Sha256Bytes sha256{};
};

struct FetchRequest {
  core::Sha256Bytes revision_digest{};
  std::string name;  // "namespace/name", for humans
  std::vector<FetchFile> files;
  // Not owned; they must outlive the call. The engine orders them per blob (SourceRank).
  std::vector<RangeSource*> sources;
  // Sources added while the fetch runs (peers that start or finish staging the same files);
  // may be null. Not owned.
  SourceSet* more_sources = nullptr;
};

struct FetchProgress {
  std::uint64_t total_bytes = 0;
  std::uint64_t done_bytes = 0;  // local + resumed + fetched so far
  std::size_t files_total = 0;
  std::size_t files_done = 0;
  // Landed bytes per second over FetchOptions::goodput_window, and the time to finish at that
  // pace; unset until measured (or while nothing lands).
  std::optional<double> goodput_bytes_per_second;
  std::optional<std::chrono::seconds> expected_finish;
};

using ProgressCallback = std::function<void(const FetchProgress&)>;

class FetchEngine {
 public:
  struct Dependencies {
    CacheStore* store = nullptr;
    SourceHealth* health = nullptr;
    const FetchMetrics* metrics = nullptr;  // may be null
    const core::Logger* logger = nullptr;   // may be null
    const core::Clock* clock = nullptr;
    // The node's grants for remote sources; null: no admission (tools, tests).
    SourceAdmission* admission = nullptr;
    SourceTelemetryRecorder* telemetry = nullptr;  // may be null
    // Paces the bytes the node's stagings write (held to a share of the disk while the node
    // serves inference); may be null.
    core::ByteThrottle* write_throttle = nullptr;
  };

  [[nodiscard]] static core::Result<std::unique_ptr<FetchEngine>> Create(FetchOptions options,
                                                                         Dependencies dependencies);
  FetchEngine(const FetchEngine&) = delete;
  FetchEngine& operator=(const FetchEngine&) = delete;
  ~FetchEngine();

  // Stages every file and publishes the revision manifest. The report is returned on success
  // and, through `report_out` when given, on failure too (error set, ready false).
  [[nodiscard]] core::Result<FetchReport> Fetch(const FetchRequest& request,
                                                core::CancellationToken& cancel,
                                                const ProgressCallback& progress = {},
                                                FetchReport* report_out = nullptr);

  [[nodiscard]] const FetchOptions& options() const { return options_; }
  // Whether the store holds the revision's manifest (a fetch of it published).
  [[nodiscard]] bool Holds(const core::Sha256Bytes& revision_digest) const {
    return dependencies_.store->FindRevision(revision_digest).has_value();
  }
  [[nodiscard]] BufferPoolStats buffer_stats() const { return pool_->Stats(); }

 private:
  class Run;
  FetchEngine(FetchOptions options, Dependencies dependencies, std::unique_ptr<BufferPool> pool);

  const FetchOptions options_;
  const Dependencies dependencies_;
  std::unique_ptr<BufferPool> pool_;
};

}  // namespace modelplane::agent
