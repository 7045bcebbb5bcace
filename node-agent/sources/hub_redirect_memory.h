// Where a hub's resolve URL redirected, kept for a while and shared by every hub source of one
// agent: a staging, the proof of possession that samples ranges after it, and the next staging
// of the same files all go straight to the signed CDN URL instead of asking the hub again (the
// Hub rate-limits resolve calls per client; a tiny window answered 429 to every proof sample in
// e2e/scenario.sh before the memory was shared).
//
// A signed CDN URL is a bearer capability: whoever holds it reads the file. So the key carries
// the credentials it was obtained with (the Secret's namespace and name, empty for none), and a
// source never finds a URL another tenant's token obtained.
// Bounded: at most `capacity` entries; a full memory drops expired entries, then the one that
// expires first.
// Thread safety: every method may be called from many threads at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "core/clock/clock.h"

namespace modelplane::agent {

class HubRedirectMemory {
 public:
  explicit HubRedirectMemory(std::size_t capacity = 4096)
      : capacity_(capacity == 0 ? 1 : capacity) {}

  [[nodiscard]] std::optional<std::string> Find(const std::string& key,
                                                core::Clock::SteadyTime now);
  // Kept until now + ttl.
  void Remember(const std::string& key, std::string url, core::Clock::SteadyTime now,
                std::chrono::nanoseconds ttl);
  void Forget(const std::string& key);
  [[nodiscard]] std::size_t size();

 private:
  struct Remembered {
    std::string url;
    core::Clock::SteadyTime until;
  };
  void MakeRoomLocked(core::Clock::SteadyTime now);

  const std::size_t capacity_;
  std::mutex mutex_;
  std::map<std::string, Remembered> entries_;  // guarded by mutex_
};

}  // namespace modelplane::agent
