// Internal to the HTTP server: the state the listener shares with its connections, the registry
// that lets Stop() reach every open connection, and the entry point that serves one accepted
// socket (plain or TLS) until it closes.
//
// Thread safety: ConnectionRegistry is internally locked; a connection runs on its own strand and
// RequestStop posts onto that strand, so it may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "core/http/router.h"
#include "core/http/server_options.h"

namespace modelplane::core::http_internal {

class ConnectionControl {
 public:
  virtual ~ConnectionControl() = default;
  // Graceful: an idle connection closes now, a busy one after its current response.
  // Forced: the socket closes now whatever it is doing.
  virtual void RequestStop(bool force) = 0;
};

class ConnectionRegistry {
 public:
  explicit ConnectionRegistry(std::size_t max_connections) : max_connections_(max_connections) {}

  // False when the server is stopping or full; the caller then drops the connection.
  [[nodiscard]] bool Register(std::uint64_t id, std::weak_ptr<ConnectionControl> connection);
  void Unregister(std::uint64_t id);
  // Marks the registry stopping (no more Register) and returns the open connections.
  [[nodiscard]] std::vector<std::shared_ptr<ConnectionControl>> BeginStop();
  [[nodiscard]] std::vector<std::shared_ptr<ConnectionControl>> Snapshot();
  // True when every connection unregistered before the deadline.
  [[nodiscard]] bool WaitEmpty(std::chrono::steady_clock::time_point deadline);
  [[nodiscard]] std::size_t size();

 private:
  const std::size_t max_connections_;
  std::mutex mutex_;
  std::condition_variable empty_;
  bool stopping_ = false;
  std::unordered_map<std::uint64_t, std::weak_ptr<ConnectionControl>> connections_;
};

struct ServerShared {
  ServerShared(ServerOptions server_options, Router server_router)
      : options(std::move(server_options)),
        router(std::move(server_router)),
        registry(options.max_connections) {}

  void Log(HttpLogLevel level, std::string_view event, std::string_view fields) const {
    if (options.log) options.log(level, event, fields);
  }

  const ServerOptions options;
  const Router router;
  // The context new connections handshake with; null for plain HTTP. Replaced by
  // HttpServer::ReloadTls, which keeps the old one in `retired_tls`: live connections may still
  // use it, and a rotation every few days costs a few kilobytes for the server's life.
  [[nodiscard]] boost::asio::ssl::context* CurrentTls() const {
    const std::lock_guard lock(tls_mutex);
    return tls.get();
  }
  void ReplaceTls(std::unique_ptr<boost::asio::ssl::context> context) {
    const std::lock_guard lock(tls_mutex);
    if (tls) retired_tls.push_back(std::move(tls));
    tls = std::move(context);
  }
  std::unique_ptr<boost::asio::ssl::context> tls;
  std::vector<std::unique_ptr<boost::asio::ssl::context>> retired_tls;
  mutable std::mutex tls_mutex;
  ConnectionRegistry registry;
  std::atomic<bool> stopping{false};
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::size_t> bodies_in_flight{0};
  std::atomic<std::uint64_t> refused_busy{0};
};

// Takes over an accepted socket (whose executor is a strand) and serves it on that strand.
void StartConnection(boost::asio::ip::tcp::socket socket, ServerShared& shared, std::uint64_t id);

}  // namespace modelplane::core::http_internal
