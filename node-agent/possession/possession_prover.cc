#include "node-agent/possession/possession_prover.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/api/object_key.h"
#include "core/backoff/backoff.h"
#include "node-agent/possession/possession_failure.h"
#include "node-agent/possession/possession_proof.h"
#include "node-agent/possession/possession_sample.h"

namespace modelplane::agent {
namespace {

// Jittered, so the nodes of a fleet that failed together (a source went down) do not all come
// back to it in the same second.
constexpr core::ExponentialBackoff kRetryBackoff{.initial = std::chrono::seconds(30),
                                                 .max = std::chrono::seconds(600)};

// What a proof is and what it found, for the worker's result and its log line.
struct ProofRun {
  core::Status outcome = core::Ok();
  std::size_t ranges = 0;
  std::vector<std::string> sources;
};

}  // namespace

PossessionProver::PossessionProver(Dependencies dependencies)
    : dependencies_(std::move(dependencies)), worker_([this] { Work(); }) {}

PossessionProver::~PossessionProver() {
  Stop();
}

void PossessionProver::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [key, entry] : entries_) {
      if (entry.cancel) entry.cancel->Cancel();
    }
  }
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void PossessionProver::Want(const LoadedRevision& revision) {
  Key key{revision.digest, core::api::ObjectKey(revision.revision.metadata.namespace_name,
                                                revision.revision.metadata.name)};
  if (dependencies_.ledger->Contains(key.first, key.second)) return;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    auto found = entries_.find(key);
    if (found != entries_.end()) {
      if (found->second.state.phase == PossessionState::Phase::kProving) return;
      if (dependencies_.clock->Now() < found->second.retry_at) return;
    }
    if (queue_.size() >= kMaxPendingProofs) {
      // A failed entry stays failed (its retry is due) until there is room.
      if (dependencies_.logger != nullptr) {
        dependencies_.logger->Debug("possession_proof_deferred",
                                    {{"revision", key.second}, {"pending", queue_.size()}});
      }
      return;
    }
    Entry& entry = entries_[key];
    entry.revision = revision;
    entry.state = {.phase = PossessionState::Phase::kProving};
    queue_.push_back(std::move(key));
  }
  changed_.notify_all();
  Notify();
}

std::optional<PossessionState> PossessionProver::State(const core::Sha256Bytes& digest,
                                                       std::string_view key) const {
  std::lock_guard lock(mutex_);
  auto found = entries_.find(Key(digest, std::string(key)));
  if (found == entries_.end()) return std::nullopt;
  return found->second.state;
}

std::optional<core::Clock::SteadyTime> PossessionProver::RetryAt(const core::Sha256Bytes& digest,
                                                                 std::string_view key) const {
  std::lock_guard lock(mutex_);
  auto found = entries_.find(Key(digest, std::string(key)));
  if (found == entries_.end() || found->second.state.phase != PossessionState::Phase::kFailed) {
    return std::nullopt;
  }
  return found->second.retry_at;
}

void PossessionProver::Keep(const std::set<Key>& wanted) {
  std::lock_guard lock(mutex_);
  std::erase_if(queue_, [&](const Key& key) { return !wanted.contains(key); });
  for (auto entry = entries_.begin(); entry != entries_.end();) {
    if (wanted.contains(entry->first)) {
      ++entry;
    } else if (entry->second.cancel) {
      entry->second.cancel->Cancel();  // the worker removes it when the proof returns
      ++entry;
    } else {
      entry = entries_.erase(entry);
    }
  }
}

void PossessionProver::Work() {
  while (true) {
    Key key;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      key = std::move(queue_.front());
      queue_.pop_front();
    }
    Prove(key);
  }
}

void PossessionProver::Prove(const Key& key) {
  LoadedRevision revision;
  auto cancel = std::make_shared<core::CancellationToken>();
  {
    std::lock_guard lock(mutex_);
    auto found = entries_.find(key);
    if (found == entries_.end()) return;
    revision = found->second.revision;
    found->second.cancel = cancel;
    if (stopping_) cancel->Cancel();
  }
  ProofRun run;
  auto sources = dependencies_.sources(revision);
  auto request = MakeFetchRequest(revision);
  if (!sources) {
    run.outcome = std::unexpected(sources.error());
  } else if (!request) {
    run.outcome = std::unexpected(request.error());
  } else {
    std::vector<SourceFile> files;
    files.reserve(request->files.size());
    for (const FetchFile& file : request->files) {
      files.push_back({.path = file.path, .sha256 = file.sha256, .size = file.size});
    }
    std::vector<RangeSource*> pointers;
    for (const auto& source : *sources) pointers.push_back(source.get());
    for (RangeSource* source : PossessionSources(pointers)) {
      run.sources.emplace_back(source->name());
    }
    const std::vector<SampledRange> sample = PlanPossessionSample(files, sample_random_);
    run.ranges = sample.size();
    const ReadContext context{.deadline = dependencies_.clock->Now() + dependencies_.read_timeout,
                              .clock = dependencies_.clock,
                              .cancel = cancel.get()};
    run.outcome = ProveSourcesServe(files, sample, pointers, *dependencies_.catalog, context);
    if (run.outcome) run.outcome = dependencies_.ledger->Record(key.first, key.second);
  }
  {
    std::lock_guard lock(mutex_);
    auto found = entries_.find(key);
    if (found == entries_.end()) return;
    Entry& entry = found->second;
    entry.cancel.reset();
    if (cancel->cancelled() || run.outcome) {
      // Stopping: nothing to report. Proven: the ledger says so from now on.
      entries_.erase(found);
    } else {
      PossessionFailure failure = DescribePossessionFailure(run.outcome.error());
      entry.state = {.phase = PossessionState::Phase::kFailed,
                     .reason = std::move(failure.reason),
                     .message = std::move(failure.message)};
      const int failures = ++entry.failures;
      entry.retry_at = dependencies_.clock->Now() + kRetryBackoff.Jittered(failures, jitter_);
    }
  }
  if (cancel->cancelled()) return;
  if (dependencies_.logger != nullptr) {
    if (run.outcome) {
      dependencies_.logger->Info("possession_proven",
                                 {{"revision", key.second},
                                  {"digest", core::FormatDigest(key.first)},
                                  {"ranges", run.ranges},
                                  {"sources", fmt::format("{}", fmt::join(run.sources, ","))}});
    } else {
      dependencies_.logger->Warn("possession_not_proven",
                                 {{"revision", key.second},
                                  {"digest", core::FormatDigest(key.first)},
                                  {"error", run.outcome.error().ToString()}});
    }
  }
  Notify();
}

void PossessionProver::Notify() {
  if (dependencies_.on_change) dependencies_.on_change();
}

}  // namespace modelplane::agent
