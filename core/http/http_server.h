// An asynchronous HTTP/1.1 server (Boost.Beast) with keep-alive, per-operation deadlines, size
// limits, optional TLS / mutual TLS, built-in /healthz, /readyz and /metrics, and graceful stop.
//
// Create() binds, listens and starts `threads` io threads; the server serves until Stop() or
// destruction. Stop() stops accepting, lets in-flight requests finish for up to
// ServerOptions::stop_grace, then closes what is left and joins the threads.
// With use_sendfile (the default) Create() sets SIGPIPE to ignored for the process: sendfile(2)
// cannot suppress it per call, and a client that disconnects must not end the server.
// Thread safety: port() and stats() may be called from any thread; Stop() too, and it is
// idempotent, but must not be called from a handler (it waits for handlers to finish).
#pragma once

#include <cstdint>
#include <memory>

#include "core/error/error.h"
#include "core/http/router.h"
#include "core/http/server_options.h"

namespace modelplane::core {

struct ServerStats {
  std::uint64_t accepted_connections = 0;  // since start
  std::uint64_t open_connections = 0;      // now
  std::uint64_t requests = 0;              // fully read requests since start
  std::uint64_t refused_busy = 0;          // 503s for max_concurrent_bodies since start
};

class HttpServer {
 public:
  [[nodiscard]] static Result<std::unique_ptr<HttpServer>> Create(ServerOptions options,
                                                                  Router router);
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  ~HttpServer();

  // The bound port (the kernel's choice when ServerOptions::port was 0).
  [[nodiscard]] std::uint16_t port() const;
  [[nodiscard]] ServerStats stats() const;
  void Stop();
  // Reads the TLS certificate, key and client CA files again (a renewed certificate): new
  // connections use them, live ones finish with the old. On failure the old stay in use.
  [[nodiscard]] Status ReloadTls();

 private:
  class Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace modelplane::core
