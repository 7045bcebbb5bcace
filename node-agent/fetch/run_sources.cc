#include "node-agent/fetch/run_sources.h"

#include <algorithm>

namespace modelplane::agent {

RunSources::RunSources(const std::vector<RangeSource*>& fixed, SourceSet* more,
                       SourceAdmission* admission, SourceTelemetryRecorder* telemetry,
                       const core::Clock& clock, Options options)
    : fixed_(fixed),
      more_(more),
      admission_(admission),
      telemetry_(telemetry),
      clock_(clock),
      options_(options) {}

std::size_t RunSources::size() const {
  return fixed_.size() + (more_ != nullptr ? more_->size() : 0);
}

RangeSource& RunSources::at(std::size_t index) const {
  if (index < fixed_.size()) return *fixed_[index];
  return more_->at(index - fixed_.size());
}

std::string RunSources::TelemetryName(std::size_t index) const {
  const RangeSource& source = at(index);
  return std::string(source.admission_key().empty() ? source.name() : source.admission_key());
}

RunSources::State& RunSources::StateLocked(std::size_t index) {
  while (states_.size() <= index) states_.push_back({.retry_quota = options_.retry_quota});
  return states_[index];
}

bool RunSources::TryAcquire(std::size_t index) {
  RangeSource& source = at(index);
  {
    std::lock_guard lock(mutex_);
    State& state = StateLocked(index);
    if (clock_.Now() < state.cooled_until) return false;
    if (state.in_use >= std::max<std::size_t>(1, source.max_concurrency())) return false;
    if (admission_ != nullptr && !source.admission_key().empty() &&
        !admission_->TryAcquire(source.admission_key())) {
      return false;
    }
    ++state.in_use;
  }
  if (telemetry_ != nullptr) telemetry_->Started(TelemetryName(index), source.tier());
  return true;
}

void RunSources::Release(std::size_t index, std::optional<RequestOutcome> outcome,
                         std::uint64_t bytes, std::optional<std::chrono::milliseconds> ttfb,
                         std::optional<std::chrono::milliseconds> retry_after) {
  RangeSource& source = at(index);
  // Telemetry first: once the slot is free another request may start, and the window's peak
  // must not count both.
  if (telemetry_ != nullptr) {
    if (outcome) {
      telemetry_->Finished(TelemetryName(index), *outcome, bytes, ttfb);
    } else {
      telemetry_->Abandoned(TelemetryName(index));
    }
  }
  {
    std::lock_guard lock(mutex_);
    State& state = StateLocked(index);
    state.in_use = state.in_use > 0 ? state.in_use - 1 : 0;
    if (outcome == RequestOutcome::kOk) {
      state.retry_quota = std::min(options_.retry_quota, state.retry_quota + 1);
    }
    if (admission_ != nullptr && !source.admission_key().empty()) {
      admission_->Release(source.admission_key(), outcome.value_or(RequestOutcome::kFailed), bytes,
                          retry_after);
    }
    ++generation_;
  }
  changed_.notify_all();
}

void RunSources::CoolDown(std::size_t index) {
  std::lock_guard lock(mutex_);
  StateLocked(index).cooled_until = clock_.Now() + options_.stall_cooldown;
}

bool RunSources::CoolingDown(std::size_t index) const {
  std::lock_guard lock(mutex_);
  return index < states_.size() && clock_.Now() < states_[index].cooled_until;
}

bool RunSources::SpendRetry(std::size_t index) {
  std::lock_guard lock(mutex_);
  State& state = StateLocked(index);
  if (state.retry_quota <= 0) return false;
  --state.retry_quota;
  return true;
}

bool RunSources::WaitForChange(core::CancellationToken& cancel, std::chrono::milliseconds timeout) {
  if (cancel.cancelled()) return false;
  {
    std::unique_lock lock(mutex_);
    const std::uint64_t seen = generation_;
    changed_.wait_for(lock, timeout, [&] { return generation_ != seen || cancel.cancelled(); });
  }
  return !cancel.cancelled();
}

void RunSources::WakeAll() {
  {
    std::lock_guard lock(mutex_);
    ++generation_;
  }
  changed_.notify_all();
}

}  // namespace modelplane::agent
