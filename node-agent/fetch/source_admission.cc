#include "node-agent/fetch/source_admission.h"

#include <algorithm>
#include <cmath>

namespace modelplane::agent {

SourceAdmission::SourceAdmission(const core::Clock& clock, AdmissionOptions options)
    : clock_(clock), options_(options) {}

void SourceAdmission::SetGrants(const std::vector<core::api::StreamGrant>& grants) {
  std::lock_guard lock(mutex_);
  grants_.clear();
  for (const core::api::StreamGrant& grant : grants) grants_[grant.source] = grant;
}

void SourceAdmission::SetOperatorAliveUntil(core::Clock::SteadyTime until) {
  std::lock_guard lock(mutex_);
  operator_alive_until_ = std::max(operator_alive_until_, until);
}

void SourceAdmission::NoteAskedLocked(State& state) const {
  const auto now = clock_.Now();
  if (!AskingLocked(state, now)) state.asking_since = now;
  state.asked_at = now;
}

bool SourceAdmission::AskingLocked(const State& state, core::Clock::SteadyTime now) {
  return state.asked_at && now - *state.asked_at <= kAskingGap;
}

bool SourceAdmission::AnyValidGrantLocked() const {
  const auto wall_now = clock_.WallNow();
  return std::any_of(grants_.begin(), grants_.end(),
                     [&](const auto& entry) { return wall_now < entry.second.expires_at; });
}

int SourceAdmission::CapLocked(std::string_view source, const State& state) const {
  const auto wall_now = clock_.WallNow();
  const auto grant = grants_.find(source);
  if (grant != grants_.end()) {
    const int streams = std::max(0, grant->second.streams);
    if (wall_now < grant->second.expires_at) return streams;
    if (streams == 0 && wall_now < grant->second.expires_at + options_.follower_grace) return 0;
    return streams == 0 ? options_.safe_streams : std::min(streams, options_.safe_streams);
  }
  // The operator is granting, and not this source: it wants this node to wait.
  if (AnyValidGrantLocked()) return 0;
  const auto now = clock_.Now();
  // A query between stagings (the status report's) sees what a new staging would get.
  const auto waited = AskingLocked(state, now) ? now - state.asking_since
                                               : core::Clock::SteadyTime::duration::zero();
  if (waited < options_.start_grace) return 0;
  if (waited < options_.first_grant_wait && now < operator_alive_until_) return 0;
  return options_.safe_streams;
}

int SourceAdmission::LimitLocked(std::string_view source, State& state) const {
  const int cap = CapLocked(source, state);
  if (cap == 0) return 0;
  if (state.window <= 0 || state.window > cap) state.window = cap;
  return std::clamp(static_cast<int>(std::floor(state.window)), 1, cap);
}

bool SourceAdmission::TryAcquire(std::string_view source) {
  if (!options_.enabled) return true;
  const auto now = clock_.Now();
  std::lock_guard lock(mutex_);
  State& state = states_.try_emplace(std::string(source)).first->second;
  NoteAskedLocked(state);
  if (now < state.paused_until || now < state.next_start) return false;
  if (state.in_flight >= LimitLocked(source, state)) return false;
  ++state.in_flight;
  return true;
}

void SourceAdmission::Release(std::string_view source, RequestOutcome outcome, std::uint64_t bytes,
                              std::optional<std::chrono::milliseconds> retry_after) {
  if (!options_.enabled) return;
  const auto now = clock_.Now();
  std::lock_guard lock(mutex_);
  auto entry = states_.find(source);
  if (entry == states_.end()) return;
  State& state = entry->second;
  state.in_flight = std::max(0, state.in_flight - 1);
  const int cap = CapLocked(source, state);
  if (outcome == RequestOutcome::kThrottled) {
    state.window = std::max(1.0, state.window * kCut);
  } else if (outcome == RequestOutcome::kOk && state.window > 0) {
    state.window = std::min<double>(cap, state.window + 1.0 / state.window);
  }
  if (retry_after) state.paused_until = std::max(state.paused_until, now + *retry_after);
  const auto grant = grants_.find(source);
  if (grant != grants_.end() && grant->second.bytes_per_second &&
      *grant->second.bytes_per_second > 0 && clock_.WallNow() < grant->second.expires_at) {
    const auto spacing =
        std::chrono::duration_cast<core::Clock::SteadyTime::duration>(std::chrono::duration<double>(
            static_cast<double>(bytes) / static_cast<double>(*grant->second.bytes_per_second)));
    state.next_start = std::max(state.next_start, now) + spacing;
  }
}

int SourceAdmission::Limit(std::string_view source) const {
  if (!options_.enabled) return kUnlimited;
  std::lock_guard lock(mutex_);
  State& state = states_.try_emplace(std::string(source)).first->second;
  return LimitLocked(source, state);
}

bool SourceAdmission::AwaitingFirstGrant() const {
  if (!options_.enabled) return false;
  const auto now = clock_.Now();
  std::lock_guard lock(mutex_);
  if (AnyValidGrantLocked()) return false;
  return std::any_of(states_.begin(), states_.end(), [&](const auto& entry) {
    return !grants_.contains(entry.first) && AskingLocked(entry.second, now);
  });
}

}  // namespace modelplane::agent
