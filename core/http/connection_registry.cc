#include "core/http/server_connection.h"

namespace modelplane::core::http_internal {

bool ConnectionRegistry::Register(std::uint64_t id, std::weak_ptr<ConnectionControl> connection) {
  std::lock_guard lock(mutex_);
  if (stopping_ || connections_.size() >= max_connections_) return false;
  connections_.emplace(id, std::move(connection));
  return true;
}

void ConnectionRegistry::Unregister(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  connections_.erase(id);
  if (connections_.empty()) empty_.notify_all();
}

std::vector<std::shared_ptr<ConnectionControl>> ConnectionRegistry::BeginStop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  return Snapshot();
}

std::vector<std::shared_ptr<ConnectionControl>> ConnectionRegistry::Snapshot() {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<ConnectionControl>> open;
  open.reserve(connections_.size());
  for (auto& [id, weak] : connections_) {
    if (auto connection = weak.lock()) open.push_back(std::move(connection));
  }
  return open;
}

bool ConnectionRegistry::WaitEmpty(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  return empty_.wait_until(lock, deadline, [this] { return connections_.empty(); });
}

std::size_t ConnectionRegistry::size() {
  std::lock_guard lock(mutex_);
  return connections_.size();
}

}  // namespace modelplane::core::http_internal
