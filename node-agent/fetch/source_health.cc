#include "node-agent/fetch/source_health.h"

#include "core/api/model_revision.h"

namespace modelplane::agent {

void SourceHealth::ReportBadBytes(std::string_view source_name, std::string_view tier,
                                  const core::Sha256Bytes& blob) {
  std::lock_guard lock(mutex_);
  barred_.emplace(std::string(source_name), blob);
  if (tier == core::api::kTierPeer) {
    cooling_until_[std::string(source_name)] = clock_.Now() + peer_cooldown_;
  }
  ++quarantines_;
}

bool SourceHealth::MayServe(std::string_view source_name, const core::Sha256Bytes& blob) const {
  std::lock_guard lock(mutex_);
  if (barred_.contains({std::string(source_name), blob})) return false;
  const auto cooling = cooling_until_.find(source_name);
  return cooling == cooling_until_.end() || clock_.Now() >= cooling->second;
}

std::uint64_t SourceHealth::quarantines() const {
  std::lock_guard lock(mutex_);
  return quarantines_;
}

void SourceHealth::ReportRangeOutcome(std::string_view source_name, bool served) {
  std::lock_guard lock(mutex_);
  auto found = outcomes_.find(source_name);
  if (found == outcomes_.end()) {
    // Bounded by the sources revisions name; peers are not origins and are not tracked.
    found = outcomes_.emplace(std::string(source_name), Outcomes{}).first;
  }
  (served ? found->second.last_success : found->second.last_failure) = clock_.Now();
}

bool SourceHealth::LooksDown(std::string_view source_name, std::chrono::seconds within) const {
  std::lock_guard lock(mutex_);
  const auto found = outcomes_.find(source_name);
  if (found == outcomes_.end() || !found->second.last_failure) return false;
  const Outcomes& outcomes = found->second;
  if (outcomes.last_success && *outcomes.last_success >= *outcomes.last_failure) return false;
  return clock_.Now() - *outcomes.last_failure < within;
}

}  // namespace modelplane::agent
