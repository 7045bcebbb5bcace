// How often each revision has been used on this node, aged: the frequency half of eviction's
// value per byte (retention_policy.h).
//
// A use is a pod that starts using the revision: a user (a pod uid, or a mount's target) not
// seen with it before adds 1 to its score. Scores age: a score halves every `half_life` while
// nothing uses the revision, and holds while something does (a model serving all week is not
// worth less on Friday). A revision the node holds but that no pod ever used starts at 1 from
// when it was published (Known), so prestaged copies age too, and frequently used revisions
// outrank them only by being used. The time of last use is what status reports as lastUsed.
//
// Persisted as a small JSON file in the cache root (Save/Load), so a restart keeps what the
// node learned; a missing or unreadable file starts empty. Bounded: at most `max_revisions`
// revisions (the least recently touched are forgotten) and `max_users` remembered users each.
//
// Times are wall times passed in (the clock is injected by the caller): scores must survive a
// restart, which steady time does not.
// Thread safety: not thread-safe; the agent's control loop owns it.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/digest/sha256.h"
#include "core/error/error.h"

namespace modelplane::agent {

struct UseHistoryOptions {
  std::chrono::seconds half_life{std::chrono::hours(24)};
  std::size_t max_revisions = 4096;
  std::size_t max_users = 64;
};

class UseHistory {
 public:
  using WallTime = std::chrono::system_clock::time_point;

  explicit UseHistory(UseHistoryOptions options = {}) : options_(options) {}

  // The revision is used now by `users` (empty: not in use). Returns true when something
  // changed that is worth saving (a new use, or the first sighting).
  bool Observe(const core::Sha256Bytes& digest, const std::set<std::string>& users, WallTime now);
  // A revision the node holds: starts at score 1 from `published` unless known already.
  bool Known(const core::Sha256Bytes& digest, WallTime published);

  // The aged score at `now`; 0 for a revision never seen.
  [[nodiscard]] double Score(const core::Sha256Bytes& digest, WallTime now) const;
  [[nodiscard]] std::optional<WallTime> LastUsed(const core::Sha256Bytes& digest) const;
  [[nodiscard]] std::size_t size() const { return entries_.size(); }

  [[nodiscard]] std::string Serialize() const;
  // Strict about shape, bounded in size; entries past the bounds are dropped.
  [[nodiscard]] core::Status Parse(std::string_view text);
  [[nodiscard]] core::Status Save(const std::filesystem::path& path) const;
  // A missing file is an empty history.
  [[nodiscard]] core::Status Load(const std::filesystem::path& path);

 private:
  struct Entry {
    double score = 0;  // as of `since`
    WallTime since{};  // when `score` was last brought up to date
    std::optional<WallTime> last_used;
    bool in_use = false;            // while true, the score does not age
    std::deque<std::string> users;  // most recent last
  };
  [[nodiscard]] double Aged(const Entry& entry, WallTime now) const;
  void Bound();

  UseHistoryOptions options_;
  std::map<core::Sha256Bytes, Entry> entries_;
};

}  // namespace modelplane::agent
