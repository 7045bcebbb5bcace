#include "node-agent/sources/hub_redirect_memory.h"

#include <algorithm>

namespace modelplane::agent {

std::optional<std::string> HubRedirectMemory::Find(const std::string& key,
                                                   core::Clock::SteadyTime now) {
  const std::scoped_lock lock(mutex_);
  const auto found = entries_.find(key);
  if (found == entries_.end()) return std::nullopt;
  if (now >= found->second.until) {
    entries_.erase(found);
    return std::nullopt;
  }
  return found->second.url;
}

void HubRedirectMemory::Remember(const std::string& key, std::string url,
                                 core::Clock::SteadyTime now, std::chrono::nanoseconds ttl) {
  const std::scoped_lock lock(mutex_);
  if (!entries_.contains(key)) MakeRoomLocked(now);
  entries_[key] = {std::move(url), now + ttl};
}

void HubRedirectMemory::Forget(const std::string& key) {
  const std::scoped_lock lock(mutex_);
  entries_.erase(key);
}

std::size_t HubRedirectMemory::size() {
  const std::scoped_lock lock(mutex_);
  return entries_.size();
}

void HubRedirectMemory::MakeRoomLocked(core::Clock::SteadyTime now) {
  if (entries_.size() < capacity_) return;
  std::erase_if(entries_, [now](const auto& entry) { return now >= entry.second.until; });
  if (entries_.empty() || entries_.size() < capacity_) return;
  entries_.erase(std::ranges::min_element(
      entries_, [](const auto& a, const auto& b) { return a.second.until < b.second.until; }));
}

}  // namespace modelplane::agent
