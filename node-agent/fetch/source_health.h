// What the agent remembers about sources that served bad bytes. A source whose bytes did not
// match a blob's digest is quarantined for that blob (it will not be asked for it again); a peer
// is also put in a cool-down for all blobs, because a peer that lies once may be compromised or
// have a corrupt disk. Object stores, origins and shared filesystems are the ground truth of
// last resort, so they are only barred from the one blob.
//
// It also remembers how each source's last range requests went (ReportRangeOutcome), so the
// agent can tell an origin that is down (LooksDown) from one that answers: eviction keeps the
// zone's last copy of a revision whose origin looks down.
//
// Lives longer than one fetch (the agent owns one), so a bad peer stays avoided across
// revisions. Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "core/clock/clock.h"
#include "core/digest/sha256.h"

namespace modelplane::agent {

class SourceHealth {
 public:
  SourceHealth(const core::Clock& clock, std::chrono::seconds peer_cooldown)
      : clock_(clock), peer_cooldown_(peer_cooldown) {}

  void ReportBadBytes(std::string_view source_name, std::string_view tier,
                      const core::Sha256Bytes& blob);
  // False when the source is quarantined for this blob or cooling down.
  [[nodiscard]] bool MayServe(std::string_view source_name, const core::Sha256Bytes& blob) const;
  [[nodiscard]] std::uint64_t quarantines() const;

  // A range request to the source finished: served, or failed (any error but a cancellation).
  void ReportRangeOutcome(std::string_view source_name, bool served);
  // True when the source's last outcome was a failure less than `within` ago, with no success
  // since. A source never asked is not down: nothing says so.
  [[nodiscard]] bool LooksDown(std::string_view source_name, std::chrono::seconds within) const;

 private:
  const core::Clock& clock_;
  const std::chrono::seconds peer_cooldown_;
  mutable std::mutex mutex_;
  std::set<std::pair<std::string, core::Sha256Bytes>> barred_;
  std::map<std::string, core::Clock::SteadyTime, std::less<>> cooling_until_;
  std::uint64_t quarantines_ = 0;
  struct Outcomes {
    std::optional<core::Clock::SteadyTime> last_success;
    std::optional<core::Clock::SteadyTime> last_failure;
  };
  std::map<std::string, Outcomes, std::less<>> outcomes_;
};

}  // namespace modelplane::agent
