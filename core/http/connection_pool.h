// Internal to the HTTP client: keep-alive connections per origin (scheme, host, port), bounded
// in total and in idle connections per origin.
//
// Acquire hands out a connection exclusively (an idle one when a live one exists, else a new
// one) and waits, up to the connect timeout, while the origin is at its total bound. The Lease
// gives it back: to the idle list when the response was read completely, else it is closed.
// Thread safety: all methods may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/error/error.h"
#include "core/http/client_connection.h"

namespace modelplane::core::http_internal {

struct PoolLimits {
  std::size_t max_connections_per_origin = 16;
  std::size_t max_idle_per_origin = 8;
  std::chrono::milliseconds max_idle_time{30'000};
};

struct PoolStats {
  std::uint64_t connections_opened = 0;
  std::uint64_t connections_reused = 0;
  std::uint64_t stale_discarded = 0;  // idle connections found closed by the peer
};

class ConnectionPool;

class Lease {
 public:
  Lease(ConnectionPool* pool, std::string origin, std::unique_ptr<ClientConnection> connection,
        bool reused)
      : pool_(pool),
        origin_(std::move(origin)),
        connection_(std::move(connection)),
        reused_(reused) {}
  Lease(Lease&&) noexcept = default;
  Lease& operator=(Lease&&) = delete;
  Lease(const Lease&) = delete;
  ~Lease();

  ClientConnection& operator*() const { return *connection_; }
  ClientConnection* operator->() const { return connection_.get(); }
  [[nodiscard]] bool reused() const { return reused_; }

 private:
  ConnectionPool* pool_;
  std::string origin_;
  std::unique_ptr<ClientConnection> connection_;
  bool reused_;
};

class ConnectionPool {
 public:
  using Connector = std::function<Result<std::unique_ptr<ClientConnection>>()>;

  explicit ConnectionPool(PoolLimits limits) : limits_(limits) {}

  // `fresh` closes the origin's idle connections and opens a new one: after one pooled
  // connection turned out stale, the others of its age likely are too.
  [[nodiscard]] Result<Lease> Acquire(const std::string& origin, const Connector& connect,
                                      std::chrono::milliseconds wait_limit, bool fresh);
  [[nodiscard]] PoolStats stats();

 private:
  friend class Lease;
  struct Idle {
    std::unique_ptr<ClientConnection> connection;
    std::chrono::steady_clock::time_point since;
  };
  struct Origin {
    std::deque<Idle> idle;  // most recently used at the back
    std::size_t total = 0;  // idle plus leased plus connecting
  };
  void Release(const std::string& origin, std::unique_ptr<ClientConnection> connection);

  const PoolLimits limits_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Origin> origins_;
  PoolStats stats_;
};

}  // namespace modelplane::core::http_internal
