#include "core/http/connection_pool.h"

#include <vector>

#include <fmt/format.h>

namespace modelplane::core::http_internal {

using Clock = std::chrono::steady_clock;

Lease::~Lease() {
  if (connection_ && pool_ != nullptr) pool_->Release(origin_, std::move(connection_));
}

Result<Lease> ConnectionPool::Acquire(const std::string& origin, const Connector& connect,
                                      std::chrono::milliseconds wait_limit, bool fresh) {
  const auto deadline = Clock::now() + wait_limit;
  std::vector<std::unique_ptr<ClientConnection>> discarded;  // closed outside the lock
  {
    std::unique_lock lock(mutex_);
    for (;;) {
      Origin& state = origins_[origin];
      while (!state.idle.empty()) {
        Idle idle = std::move(state.idle.back());
        state.idle.pop_back();
        const bool usable = !fresh && Clock::now() - idle.since < limits_.max_idle_time &&
                            idle.connection->LooksAlive();
        if (usable) {
          ++stats_.connections_reused;
          return Lease(this, origin, std::move(idle.connection), true);
        }
        ++stats_.stale_discarded;
        --state.total;
        discarded.push_back(std::move(idle.connection));
      }
      if (state.total < limits_.max_connections_per_origin) {
        ++state.total;
        break;
      }
      if (changed_.wait_until(lock, deadline) == std::cv_status::timeout &&
          Clock::now() >= deadline) {
        return std::unexpected(Error(ErrorCode::kResourceExhausted,
                                     fmt::format("all {} connections to {} stayed busy",
                                                 limits_.max_connections_per_origin, origin),
                                     true));
      }
    }
  }
  discarded.clear();
  auto connection = connect();
  std::lock_guard lock(mutex_);
  if (!connection) {
    --origins_[origin].total;
    changed_.notify_all();
    return std::unexpected(connection.error());
  }
  ++stats_.connections_opened;
  return Lease(this, origin, std::move(*connection), false);
}

void ConnectionPool::Release(const std::string& origin,
                             std::unique_ptr<ClientConnection> connection) {
  std::unique_lock lock(mutex_);
  Origin& state = origins_[origin];
  if (connection->Reusable() && state.idle.size() < limits_.max_idle_per_origin) {
    state.idle.push_back({std::move(connection), Clock::now()});
  } else {
    --state.total;
  }
  changed_.notify_all();
  lock.unlock();
  connection.reset();
}

PoolStats ConnectionPool::stats() {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace modelplane::core::http_internal
