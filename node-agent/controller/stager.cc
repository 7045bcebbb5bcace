#include "node-agent/controller/stager.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/api/object_key.h"
#include "node-agent/controller/staging_failure.h"

namespace modelplane::agent {
namespace {

// Jittered, so the nodes of a fleet that failed together (the origin went down) do not all
// come back to it in the same second.
constexpr core::ExponentialBackoff kRetryBackoff{.initial = std::chrono::seconds(30),
                                                 .max = std::chrono::seconds(600)};

}  // namespace

std::string_view StagingPhaseName(StagingPhase phase) {
  switch (phase) {
    case StagingPhase::kQueued: return "Pending";
    case StagingPhase::kStaging: return "Staging";
    case StagingPhase::kReady: return "Ready";
    case StagingPhase::kFailed: return "Failed";
  }
  return "Pending";
}

Stager::Stager(Dependencies dependencies, int concurrency)
    : dependencies_(std::move(dependencies)) {
  for (int index = 0; index < std::max(1, concurrency); ++index) {
    workers_.emplace_back([this] { Work(); });
  }
}

Stager::~Stager() {
  Stop();
}

void Stager::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [digest, entry] : entries_) {
      if (entry.cancel) entry.cancel->Cancel();
    }
  }
  changed_.notify_all();
  workers_.clear();
}

void Stager::Want(const LoadedRevision& revision) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    auto [entry, inserted] = entries_.try_emplace(revision.digest);
    if (!inserted) {
      const StagingPhase phase = entry->second.state.phase;
      if (phase == StagingPhase::kQueued || phase == StagingPhase::kStaging) return;
      if (phase == StagingPhase::kFailed && dependencies_.clock->Now() < entry->second.retry_at) {
        return;
      }
      // kReady: the caller found the revision missing from the store. Either its bytes were
      // found bad and dropped, and it is staged again, or the staging published between the
      // caller's look and this call, and there is nothing to do.
      if (phase == StagingPhase::kReady && dependencies_.engine->Holds(revision.digest)) return;
    }
    entry->second.revision = revision;
    entry->second.state.phase = StagingPhase::kQueued;
    entry->second.state.revision_key = core::api::ObjectKey(
        revision.revision.metadata.namespace_name, revision.revision.metadata.name);
    entry->second.state.bytes_total = 0;
    for (const auto& file : revision.revision.spec.files) {
      entry->second.state.bytes_total += static_cast<std::uint64_t>(file.size);
    }
    entry->second.state.times = {};
    entry->second.state.times.queued = dependencies_.clock->WallNow();
    queue_.push_back(revision.digest);
  }
  changed_.notify_all();
  Notify();
}

void Stager::Forget(const core::Sha256Bytes& digest) {
  std::lock_guard lock(mutex_);
  auto entry = entries_.find(digest);
  if (entry == entries_.end()) return;
  if (entry->second.cancel) {
    entry->second.cancel->Cancel();  // the worker removes it when the fetch returns
  } else {
    std::erase(queue_, digest);
    entries_.erase(entry);
  }
}

void Stager::SetPeers(const core::Sha256Bytes& digest, std::vector<PeerCandidate> peers) {
  std::lock_guard lock(mutex_);
  auto entry = entries_.find(digest);
  if (entry == entries_.end()) return;
  entry->second.peers = std::move(peers);
  UpdateRunningPeersLocked(entry->second);
}

void Stager::UpdateRunningPeersLocked(Entry& entry) {
  if (!entry.running_sources || !dependencies_.peers) return;
  for (const PeerCandidate& peer : entry.peers) {
    if (auto known = entry.running_peers.find(peer.endpoint); known != entry.running_peers.end()) {
      known->second->SetHolding(peer.holding);
      known->second->SetTicket(peer.ticket);
      continue;
    }
    auto created = dependencies_.peers(peer);
    if (!created) {
      if (dependencies_.logger != nullptr) {
        dependencies_.logger->Warn(
            "peer_source_failed", {{"peer", peer.endpoint}, {"error", created.error().ToString()}});
      }
      continue;
    }
    entry.running_peers[peer.endpoint] = created->get();
    entry.running_sources->Add(std::move(*created));
  }
}

std::optional<StagingState> Stager::State(const core::Sha256Bytes& digest) const {
  std::lock_guard lock(mutex_);
  auto entry = entries_.find(digest);
  if (entry == entries_.end()) return std::nullopt;
  return entry->second.state;
}

std::optional<core::Clock::SteadyTime> Stager::RetryAt(const core::Sha256Bytes& digest) const {
  std::lock_guard lock(mutex_);
  auto entry = entries_.find(digest);
  if (entry == entries_.end() || entry->second.state.phase != StagingPhase::kFailed) {
    return std::nullopt;
  }
  return entry->second.retry_at;
}

void Stager::Work() {
  while (true) {
    core::Sha256Bytes digest;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      digest = queue_.front();
      queue_.pop_front();
    }
    Stage(digest);
  }
}

void Stager::Stage(const core::Sha256Bytes& digest) {
  LoadedRevision revision;
  std::shared_ptr<core::CancellationToken> cancel = std::make_shared<core::CancellationToken>();
  auto peer_sources = std::make_shared<SourceSet>();
  {
    std::lock_guard lock(mutex_);
    auto entry = entries_.find(digest);
    if (entry == entries_.end()) return;
    revision = entry->second.revision;
    entry->second.cancel = cancel;
    entry->second.state.phase = StagingPhase::kStaging;
    entry->second.running_sources = peer_sources;
    entry->second.running_peers.clear();
    UpdateRunningPeersLocked(entry->second);
  }
  Notify();
  FetchReport report;
  core::Status outcome = core::Ok();
  auto sources = dependencies_.sources(revision);
  auto request = MakeFetchRequest(revision);
  if (!sources) {
    outcome = std::unexpected(sources.error());
  } else if (!request) {
    outcome = std::unexpected(request.error());
  } else {
    for (const auto& source : *sources) request->sources.push_back(source.get());
    request->more_sources = peer_sources.get();
    auto fetched = dependencies_.engine->Fetch(
        *request, *cancel,
        [this, digest](const FetchProgress& progress) {
          {
            std::lock_guard lock(mutex_);
            auto entry = entries_.find(digest);
            if (entry != entries_.end()) {
              entry->second.state.bytes_done = progress.done_bytes;
              entry->second.state.goodput_bytes_per_second = progress.goodput_bytes_per_second;
              entry->second.state.expected_finish = progress.expected_finish;
            }
          }
          Notify();
        },
        &report);
    if (!fetched) outcome = std::unexpected(fetched.error());
    if (dependencies_.on_fetched) dependencies_.on_fetched(report);
  }
  {
    std::lock_guard lock(mutex_);
    auto entry = entries_.find(digest);
    if (entry == entries_.end()) return;
    entry->second.cancel.reset();
    entry->second.running_peers.clear();
    entry->second.running_sources.reset();
    if (cancel->cancelled()) {
      entries_.erase(entry);  // forgotten or stopping: nothing to report
    } else {
      StagingState& state = entry->second.state;
      const auto queued = state.times.queued;
      state.times = report.times;
      state.times.queued = queued;
      state.tier = report.tier;
      state.bytes_by_tier = report.bytes_by_tier;
      state.goodput_bytes_per_second.reset();
      state.expected_finish.reset();
      if (outcome) {
        state.phase = StagingPhase::kReady;
        state.bytes_done = state.bytes_total;
        state.reason.clear();
        state.message.clear();
        entry->second.failures = 0;
        if (dependencies_.metrics != nullptr && state.times.queued && state.times.published) {
          dependencies_.metrics->StagingReady(
              state.tier,
              std::chrono::duration<double>(*state.times.published - *state.times.queued).count());
        }
      } else {
        state.phase = StagingPhase::kFailed;
        StagingFailure failure = DescribeStagingFailure(outcome.error(), report);
        state.reason = std::move(failure.reason);
        state.message = std::move(failure.message);
        const int failures = ++entry->second.failures;
        entry->second.retry_at =
            dependencies_.clock->Now() + kRetryBackoff.Jittered(failures, jitter_);
      }
    }
  }
  if (dependencies_.logger != nullptr && !outcome) {
    dependencies_.logger->Warn("staging_failed", {{"revision", revision.revision.metadata.name},
                                                  {"digest", core::FormatDigest(digest)},
                                                  {"error", outcome.error().ToString()}});
  }
  Notify();
}

void Stager::Notify() {
  if (dependencies_.on_change) dependencies_.on_change();
}

}  // namespace modelplane::agent
