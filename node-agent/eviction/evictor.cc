#include "node-agent/eviction/evictor.h"

#include <chrono>

#include <fmt/format.h>

namespace modelplane::agent {

Evictor::Evictor(Dependencies dependencies, Options options)
    : dependencies_(std::move(dependencies)), options_(options) {
  worker_ = std::jthread([this] { Work(); });
}

Evictor::~Evictor() {
  Stop();
}

void Evictor::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_.Cancel();
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void Evictor::Enqueue(std::vector<EvictionOrder> orders) {
  bool added = false;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    for (EvictionOrder& order : orders) {
      if (in_progress_.contains(order.digest)) continue;
      in_progress_[order.digest] = EvictionProgress{.reason = order.reason, .bytes = order.bytes};
      queue_.push_back(std::move(order));
      added = true;
    }
  }
  if (added) {
    changed_.notify_all();
    Notify();
  }
}

std::map<core::Sha256Bytes, EvictionProgress> Evictor::InProgress() const {
  std::lock_guard lock(mutex_);
  return in_progress_;
}

bool Evictor::Idle() const {
  std::lock_guard lock(mutex_);
  return in_progress_.empty();
}

std::vector<EvictionResult> Evictor::TakeFinished() {
  std::lock_guard lock(mutex_);
  return std::exchange(finished_, {});
}

void Evictor::Notify() const {
  if (dependencies_.on_change) dependencies_.on_change();
}

void Evictor::Work() {
  while (true) {
    EvictionOrder order;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      order = std::move(queue_.front());
      queue_.pop_front();
      in_progress_[order.digest].running = true;
    }
    EvictionResult result = Execute(order);
    {
      std::lock_guard lock(mutex_);
      in_progress_.erase(order.digest);
      if (!stopping_ || result.evicted) finished_.push_back(std::move(result));
    }
    Notify();
  }
}

bool Evictor::Pace(std::uint64_t bytes) {
  if (options_.delete_bytes_per_second == 0) return !stop_.cancelled();
  const auto pause = std::chrono::nanoseconds(static_cast<std::int64_t>(
      1e9 * static_cast<double>(bytes) / static_cast<double>(options_.delete_bytes_per_second)));
  return stop_.SleepFor(dependencies_.clock, pause);
}

EvictionResult Evictor::Execute(const EvictionOrder& order) {
  EvictionResult result{.digest = order.digest, .name = order.name, .reason = order.reason};
  const std::string digest = core::FormatDigest(order.digest);
  const bool whole_revision = order.digest != core::Sha256Bytes{};
  auto log = [&](core::LogLevel level, std::string_view event, std::string_view detail) {
    if (dependencies_.logger == nullptr) return;
    dependencies_.logger->Log(level, event,
                              {{"digest", whole_revision ? digest : std::string("-")},
                               {"revision", order.name},
                               {"reason", order.reason},
                               {"bytes", order.bytes},
                               {"detail", detail}});
  };
  if (whole_revision) {
    if (!order.force && dependencies_.may_evict && !dependencies_.may_evict(order.digest)) {
      result.problem = "protected since it was chosen";
      log(core::LogLevel::kInfo, "eviction_skipped", result.problem);
      return result;
    }
    std::optional<ViewClaim> claim;
    if (dependencies_.view_guard != nullptr && !order.force) {
      claim = dependencies_.view_guard->ClaimUnmounted(order.digest);
      if (!claim) {
        result.problem = "a pod has it mounted";
        log(core::LogLevel::kInfo, "eviction_skipped", result.problem);
        return result;
      }
    }
    log(core::LogLevel::kInfo, "eviction_started", "");
    if (auto removed = dependencies_.store.RemoveRevision(order.digest); !removed) {
      result.problem = removed.error().ToString();
      log(core::LogLevel::kWarn, "eviction_failed", result.problem);
      return result;
    }
  }
  auto removed = dependencies_.store.RemoveUnreferencedBlobs(order.blobs, [&](std::uint64_t size) {
    if (!Pace(size)) return false;
    std::lock_guard lock(mutex_);
    in_progress_[order.digest].bytes_freed += size;
    return true;
  });
  if (!removed) {
    result.problem = removed.error().ToString();
    log(core::LogLevel::kWarn, "eviction_failed", result.problem);
    return result;
  }
  result.bytes_freed = removed->bytes_freed;
  result.evicted = !removed->stopped;
  if (dependencies_.metrics != nullptr) {
    dependencies_.metrics->Evicted(order.reason, removed->bytes_freed);
  }
  if (dependencies_.logger != nullptr) {
    dependencies_.logger->Info(removed->stopped ? "eviction_stopped" : "eviction_finished",
                               {{"digest", whole_revision ? digest : std::string("-")},
                                {"revision", order.name},
                                {"reason", order.reason},
                                {"blobs_removed", removed->blobs_removed},
                                {"bytes_freed", removed->bytes_freed},
                                {"kept_referenced", removed->kept_referenced}});
  }
  return result;
}

}  // namespace modelplane::agent
