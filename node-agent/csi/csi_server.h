// A gRPC server on a unix socket for the CSI services, or for kubelet's plugin registration
// service on the registration socket (kubelet dials both). Start removes a stale socket left by an
// earlier run (only a socket: any other file at that path is refused), listens, and makes the
// socket owner-only; Stop stops accepting, waits for calls in flight (up to a grace period, then
// cancels them) and removes the socket.
//
// Bounded: at most `max_threads` threads serve calls, and requests are at most 4 MiB (CSI
// requests are a few KiB).
//
// Thread safety: Start and Stop from the owning thread; services are called from gRPC threads.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <vector>

#include <grpcpp/server.h>

#include "core/error/error.h"
#include "core/log/logger.h"

namespace modelplane::agent {

struct CsiServerOptions {
  std::filesystem::path socket_path;
  int max_threads = 16;
  std::chrono::milliseconds shutdown_grace{10'000};
};

class CsiServer {
 public:
  // The services must outlive the server.
  [[nodiscard]] static core::Result<std::unique_ptr<CsiServer>> Start(
      CsiServerOptions options, const std::vector<grpc::Service*>& services,
      const core::Logger& logger);
  CsiServer(const CsiServer&) = delete;
  CsiServer& operator=(const CsiServer&) = delete;
  ~CsiServer();  // Stop()

  void Stop();
  [[nodiscard]] const std::filesystem::path& socket_path() const { return options_.socket_path; }

 private:
  CsiServer(CsiServerOptions options, std::unique_ptr<grpc::Server> server,
            const core::Logger& logger);

  const CsiServerOptions options_;
  std::unique_ptr<grpc::Server> server_;
  const core::Logger logger_;
  bool stopped_ = false;
};

}  // namespace modelplane::agent
